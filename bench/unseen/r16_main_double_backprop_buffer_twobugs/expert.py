"""Residual MLP trained with an input-gradient penalty ("double backpropagation",
Drucker & LeCun 1992): loss = CE + w * ||d CE / d x||^2."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    seed: int = 0
    n: int = 512
    in_dim: int = 10
    width: int = 32
    depth: int = 3
    classes: int = 3
    batch: int = 64
    steps: int = 40
    lr: float = 0.05
    gp_weight: float = 0.1
    log_every: int = 5


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return F.relu(self.fc(x))


class ResBlock(Block):
    def forward(self, x):
        out = super().forward(x)
        out = out + x  # relu saved its output for backward: do not overwrite it
        return out


class ResMLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.inp = nn.Linear(cfg.in_dim, cfg.width)
        self.blocks = nn.ModuleList(ResBlock(cfg.width) for _ in range(cfg.depth))
        self.out = nn.Linear(cfg.width, cfg.classes)

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        return self.out(h)


def batches(x, y, batch, generator):
    """Endless shuffled batches, copied into one preallocated buffer (no per-batch allocation)."""
    xbuf = torch.empty(batch, x.shape[1])
    ybuf = torch.empty(batch, dtype=torch.long)
    while True:
        perm = torch.randperm(x.shape[0], generator=generator)
        for i in range(0, x.shape[0] - batch + 1, batch):
            idx = perm[i:i + batch]
            xbuf.copy_(x[idx])
            ybuf.copy_(y[idx])
            yield xbuf, ybuf


def make_data(cfg):
    g = torch.Generator().manual_seed(21)
    x = torch.randn(cfg.n, cfg.in_dim, generator=g)
    w = torch.randn(cfg.in_dim, cfg.classes, generator=g)
    y = (x @ w + 0.5 * torch.randn(cfg.n, cfg.classes, generator=g)).argmax(1)
    return x, y


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    x, y = make_data(cfg)
    model = ResMLP(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    per_sample_ce = lambda xb, yb: F.cross_entropy(model(xb), yb, reduction="none")

    def train_step(xb, yb):
        xb = xb.detach().requires_grad_(True)  # leave the generator's buffer a plain tensor
        losses = per_sample_ce(xb, yb)
        (gx,) = torch.autograd.grad(losses.sum(), xb, create_graph=True)
        ce = losses.mean()
        penalty = gx.pow(2).sum(1).mean()
        loss = ce + cfg.gp_weight * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        return ce.item(), penalty.item()

    stream = batches(x, y, cfg.batch, torch.Generator().manual_seed(cfg.seed))
    for step in range(1, cfg.steps + 1):
        xb, yb = next(stream)
        ce, pen = train_step(xb, yb)
        if step % cfg.log_every == 0:
            print(f"step {step:3d} ce {ce:.5f} grad-penalty {pen:.5f}")
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
        norms = " ".join(f"{b.fc.weight.norm().item():.5f}" for b in model.blocks)
    print(f"train acc {acc:.4f}")
    print(f"block weight norms {norms}")


if __name__ == "__main__":
    main()
