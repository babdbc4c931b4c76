"""Hamiltonian Neural Network on a noisy mass-spring system (Greydanus et al. 2019 style)."""
import argparse
from dataclasses import dataclass, fields

import torch
import torch.nn as nn


@dataclass
class Config:
    hidden: int = 32
    lr: float = 1e-3
    steps: int = 40
    n_samples: int = 128
    noise: float = 0.05
    seed: int = 0


def parse_config() -> Config:
    parser = argparse.ArgumentParser()
    for f in fields(Config):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    ns = parser.parse_args()
    return Config(**{f.name: getattr(ns, f.name) for f in fields(Config)})


def make_data(cfg: Config):
    g = torch.Generator().manual_seed(cfg.seed)
    r = 0.5 + torch.rand(cfg.n_samples, 1, generator=g)
    th = 2 * torch.pi * torch.rand(cfg.n_samples, 1, generator=g)
    q, p = r * torch.cos(th), r * torch.sin(th)
    x = torch.cat([q, p], 1)
    dx = torch.cat([p, -q], 1) + cfg.noise * torch.randn(cfg.n_samples, 2, generator=g)
    return x, dx


class HNN(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                 nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)

    def time_derivative(self, x):
        H = self.forward(x)
        dH = torch.autograd.grad(H.sum(), x)[0]
        dHdq, dHdp = dH.chunk(2, dim=1)
        return torch.cat([dHdp, -dHdq], dim=1)


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    x, dx = make_data(cfg)
    model = HNN(cfg.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    for step in range(cfg.steps):
        xb = x.clone().requires_grad_(True)
        dx_hat = model.time_derivative(xb)
        loss = (dx_hat - dx).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == cfg.steps - 1:
            print(f"step {step} loss {loss.item():.6f}")
    total = sum(p.sum() for p in model.parameters()).item()
    print(f"checksum {total:.6f}")


if __name__ == "__main__":
    main()
