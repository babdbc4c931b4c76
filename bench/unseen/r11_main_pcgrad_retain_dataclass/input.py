"""Two-task learning with PCGrad (Yu et al. 2020, "Gradient Surgery for Multi-Task Learning").

A shared trunk feeds a regression head and a classification head whose gradients on the
trunk partly conflict. Each task's gradient w.r.t. the shared parameters is computed
separately, conflicting components are projected out, and the sum is applied.
"""
import argparse
import random
from dataclasses import dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    seed: int = 0
    n_train: int = 1024
    in_dim: int = 16
    hidden: int = 64
    dropout: float = 0.1
    batch_size: int = 64
    epochs: int = 6
    lr: float = 3e-3
    use_pcgrad: bool = True


def parse_config() -> Config:
    parser = argparse.ArgumentParser()
    for f in fields(Config):
        if f.type is bool or f.type == "bool":
            parser.add_argument(f"--{f.name.replace('_', '-')}", type=lambda s: s.lower() in ("1", "true", "yes"),
                                default=f.default)
        else:
            parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Config(**vars(parser.parse_args()))


class MultiTaskNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(cfg.in_dim, cfg.hidden), nn.ReLU(), nn.Dropout(cfg.dropout),
                                   nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU())
        self.reg_head = nn.Linear(cfg.hidden, 1)
        self.cls_head = nn.Linear(cfg.hidden, 3)

    def forward(self, x):
        h = self.trunk(x)
        return self.reg_head(h).squeeze(-1), self.cls_head(h)


def make_data(cfg, g):
    x = torch.randn(cfg.n_train + 512, cfg.in_dim, generator=g)
    w = torch.randn(cfg.in_dim, generator=g)
    y_reg = torch.tanh(x @ w / 4) + 0.1 * torch.randn(len(x), generator=g)
    # the classification target reuses the same direction with the opposite sign (conflict)
    score = -(x @ w) / 4 + 0.5 * x[:, 0] * x[:, 1]
    y_cls = torch.bucketize(score, torch.tensor([-0.5, 0.5]))
    n = cfg.n_train
    return (x[:n], y_reg[:n], y_cls[:n]), (x[n:], y_reg[n:], y_cls[n:])


def pcgrad_combine(task_grads):
    """task_grads: list over tasks of flat gradient vectors of the shared parameters."""
    projected = [g.clone() for g in task_grads]
    order = list(range(len(task_grads)))
    conflicts = 0
    for i in range(len(projected)):
        random.shuffle(order)
        for j in order:
            if j == i:
                continue
            dot = torch.dot(projected[i], task_grads[j])
            if dot < 0:
                projected[i] -= dot / task_grads[j].pow(2).sum() * task_grads[j]
                conflicts += 1
    return torch.stack(projected).sum(0), conflicts


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    (x, y_reg, y_cls), (xv, yv_reg, yv_cls) = make_data(cfg, g)
    model = MultiTaskNet(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    shared = list(model.trunk.parameters())

    for epoch in range(cfg.epochs):
        model.train()
        perm = torch.randperm(cfg.n_train, generator=g)
        tot_reg = tot_cls = 0.0
        n_conf = 0
        for i in range(0, cfg.n_train, cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            pred_reg, logits = model(x[idx])
            losses = [F.mse_loss(pred_reg, y_reg[idx]), F.cross_entropy(logits, y_cls[idx])]

            if cfg.use_pcgrad:
                task_grads, head_grads = [], {}
                for loss in losses:
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    task_grads.append(torch.cat([p.grad.flatten() for p in shared]))
                    for p in list(model.reg_head.parameters()) + list(model.cls_head.parameters()):
                        if p.grad is not None:
                            head_grads[p] = head_grads.get(p, 0) + p.grad.clone()
                merged, c = pcgrad_combine(task_grads)
                n_conf += c
                offset = 0
                for p in shared:
                    p.grad = merged[offset:offset + p.numel()].view_as(p).clone()
                    offset += p.numel()
                for p, gsum in head_grads.items():
                    p.grad = gsum
            else:
                opt.zero_grad(set_to_none=True)
                sum(losses).backward()
            opt.step()
            tot_reg += losses[0].item() * len(idx)
            tot_cls += losses[1].item() * len(idx)

        model.eval()
        with torch.no_grad():
            pr, lg = model(xv)
            val_mse = F.mse_loss(pr, yv_reg).item()
            val_acc = (lg.argmax(-1) == yv_cls).float().mean().item()
        print(f"epoch {epoch} train_mse {tot_reg / cfg.n_train:.5f} train_ce {tot_cls / cfg.n_train:.5f} "
              f"conflicts {n_conf:3d} val_mse {val_mse:.5f} val_acc {val_acc:.4f}")

    checksum = sum(p.detach().double().abs().sum().item() for p in shared)
    print(f"trunk checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
