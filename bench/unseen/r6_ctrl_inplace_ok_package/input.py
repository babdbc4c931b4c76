"""Frame tagging on long synthetic streams: stateful GRU (truncated BPTT), label
smoothing, gradient clipping, EMA weights, checkpoints and a CSV log.
Run: python input.py"""
import csv
import os
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ema import ModelEMA
from models import StatefulTagger

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class Config:
    n_streams: int = 16
    stream_len: int = 240
    in_dim: int = 5
    hidden: int = 32
    n_classes: int = 3
    window: int = 30
    epochs: int = 4
    lr: float = 3e-3
    smoothing: float = 0.1
    clip: float = 1.0
    ckpt_dir: str = "checkpoints"
    log_file: str = "train_log.csv"


def make_streams(cfg, means, gen):
    states = torch.zeros(cfg.n_streams, cfg.stream_len, dtype=torch.long)
    for t in range(1, cfg.stream_len):
        switch = torch.rand(cfg.n_streams, generator=gen) < 0.05
        states[:, t] = torch.where(switch, torch.randint(0, cfg.n_classes, (cfg.n_streams,), generator=gen),
                                   states[:, t - 1])
    x = means[states] + 0.8 * torch.randn(cfg.n_streams, cfg.stream_len, cfg.in_dim, generator=gen)
    return x, states


def smooth_targets(labels, n_classes, eps):
    target = torch.full((labels.numel(), n_classes), eps / (n_classes - 1))
    target.scatter_(1, labels.reshape(-1, 1), 1.0 - eps)
    return target


def main():
    cfg = Config()
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    means = torch.randn(cfg.n_classes, cfg.in_dim, generator=gen)
    x, y = make_streams(cfg, means, gen)
    x_val, y_val = make_streams(cfg, means, gen)

    model = StatefulTagger(cfg.in_dim, cfg.hidden, cfg.n_classes)
    ema = ModelEMA(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    ckpt_dir = os.path.join(HERE, cfg.ckpt_dir)
    os.makedirs(ckpt_dir, exist_ok=True)

    with open(os.path.join(HERE, cfg.log_file), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["epoch", "loss", "val_acc", "val_acc_ema"])
        for epoch in range(cfg.epochs):
            model.train()
            h = None
            total, steps = 0.0, 0
            for start in range(0, cfg.stream_len, cfg.window):
                xb, yb = x[:, start:start + cfg.window], y[:, start:start + cfg.window]
                if h is not None:
                    h = h.detach()
                logits, h = model(xb, h)
                log_probs = F.log_softmax(logits.reshape(-1, cfg.n_classes), dim=-1)
                loss = -(smooth_targets(yb, cfg.n_classes, cfg.smoothing) * log_probs).sum(1).mean()
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
                optimizer.step()
                ema.update(model)
                total += loss.item()
                steps += 1

            model.eval()
            with torch.no_grad():
                acc = (model(x_val)[0].argmax(-1) == y_val).float().mean().item()
                acc_ema = (ema.module(x_val)[0].argmax(-1) == y_val).float().mean().item()
            print(f"epoch {epoch} loss {total / steps:.4f} val acc {acc:.4f} ema acc {acc_ema:.4f}")
            writer.writerow([epoch, f"{total / steps:.4f}", f"{acc:.4f}", f"{acc_ema:.4f}"])
            torch.save({"model": model.state_dict(), "ema": ema.module.state_dict(), "epoch": epoch},
                       os.path.join(ckpt_dir, f"epoch{epoch}.pt"))

    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
