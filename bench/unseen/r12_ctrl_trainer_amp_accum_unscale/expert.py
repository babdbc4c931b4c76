"""Mixed-precision training (bf16 autocast + GradScaler, as ported from a CUDA fp16 recipe)
with gradient accumulation and gradient clipping, in a small Trainer class."""
import argparse
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml


class TinyEncoderClassifier(nn.Module):
    def __init__(self, vocab, d_model, n_classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=2 * d_model,
                                           dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, tokens):
        h = self.encoder(self.emb(tokens))
        return self.head(h.mean(dim=1))


def make_data(n, seq_len, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, vocab, (n, seq_len), generator=g)
    y = ((x < vocab // 4).sum(1) > seq_len // 4).long() * 2 + (x[:, 0] % 2)   # 4 classes
    return x, y


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        self.model = TinyEncoderClassifier(cfg["vocab"], cfg["d_model"])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["lr"])
        self.scaler = torch.amp.GradScaler("cpu")
        self.x_tr, self.y_tr = make_data(cfg["n_train"], cfg["seq_len"], cfg["vocab"], cfg["seed"] + 1)
        self.x_va, self.y_va = make_data(cfg["n_val"], cfg["seq_len"], cfg["vocab"], cfg["seed"] + 2)

    def train_epoch(self, g):
        self.model.train()
        bs, accum = self.cfg["batch_size"], self.cfg["accum_steps"]
        perm = torch.randperm(self.x_tr.size(0), generator=g)
        total, n = 0.0, 0
        self.optimizer.zero_grad()
        for i, start in enumerate(range(0, perm.numel(), bs)):
            idx = perm[start:start + bs]
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = self.model(self.x_tr[idx])
                loss = F.cross_entropy(logits.float(), self.y_tr[idx])
            self.scaler.scale(loss / accum).backward()
            if (i + 1) % accum == 0:
                # clip the true (unscaled) gradients, once per optimizer step
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["max_grad_norm"])
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad()
            total += loss.item() * idx.numel()
            n += idx.numel()
        return total / n

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = self.model(self.x_va).float()
        return F.cross_entropy(logits, self.y_va).item(), (logits.argmax(1) == self.y_va).float().mean().item()

    def fit(self):
        g = torch.Generator().manual_seed(self.cfg["seed"] + 3)
        for epoch in range(1, self.cfg["epochs"] + 1):
            tr = self.train_epoch(g)
            vl, va = self.evaluate()
            print(f"epoch {epoch} train_loss {tr:.5f} val_loss {vl:.5f} val_acc {va:.4f} "
                  f"scale {self.scaler.get_scale():.1f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=str(Path(__file__).with_name("amp.yaml")))
    cfg = yaml.safe_load(Path(p.parse_args().config).read_text())
    Trainer(cfg).fit()


if __name__ == "__main__":
    main()
