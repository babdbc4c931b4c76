"""Noise-prediction (denoising) MLP on a 2-D toy distribution, trained with a small
Trainer class and gradient accumulation. Run: python input.py [--train-steps 60 ...]"""
import argparse
import math
from dataclasses import dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    train_steps: int = 60
    grad_accum: int = 4
    batch_size: int = 64
    lr: float = 2e-3
    hidden: int = 64
    n_levels: int = 10
    log_every: int = 10
    seed: int = 0


def two_spirals(n, gen):
    t = 3 * math.pi * torch.rand(n, generator=gen)
    arm = torch.randint(0, 2, (n,), generator=gen) * 2 - 1
    pts = torch.stack([t * torch.cos(t), t * torch.sin(t)], dim=1) * arm[:, None] / 6.0
    return pts + 0.03 * torch.randn(n, 2, generator=gen)


class Denoiser(nn.Module):
    def __init__(self, hidden, n_levels):
        super().__init__()
        self.level_emb = nn.Embedding(n_levels, hidden)
        self.inp = nn.Linear(2, hidden)
        self.body = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 2))
        self.register_buffer("sigmas", torch.logspace(-1.3, 0.0, n_levels))

    def forward(self, x_noisy, level):
        return self.body(self.inp(x_noisy) + self.level_emb(level))

    def loss(self, x, level, noise):
        x_noisy = x + self.sigmas[level][:, None] * noise
        return F.mse_loss(self(x_noisy, level), noise)


class Trainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        self.gen = torch.Generator().manual_seed(cfg.seed + 1)
        self.total_loss = 0.0          # loss of the current accumulation window (logged)
        self.history = []

    def next_batch(self):
        x = two_spirals(self.cfg.batch_size, self.gen)
        level = torch.randint(0, self.cfg.n_levels, (self.cfg.batch_size,), generator=self.gen)
        return x, level, torch.randn(x.shape, generator=self.gen)

    def train_step(self, batch):
        loss = self.model.loss(*batch)
        self.total_loss = self.total_loss + loss / self.cfg.grad_accum
        return loss

    def optimizer_step(self):
        self.total_loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self.opt.zero_grad()
        self.history.append(self.total_loss.item())

    def fit(self):
        self.model.train()
        for step in range(self.cfg.train_steps):
            for _ in range(self.cfg.grad_accum):
                self.train_step(self.next_batch())
            self.optimizer_step()
            if (step + 1) % self.cfg.log_every == 0:
                window = self.history[-self.cfg.log_every:]
                print(f"step {step + 1} loss {sum(window) / len(window):.5f}")

    @torch.no_grad()
    def evaluate(self, n=512):
        self.model.eval()
        gen = torch.Generator().manual_seed(123)
        x = two_spirals(n, gen)
        level = torch.arange(n) % self.cfg.n_levels
        return self.model.loss(x, level, torch.randn(x.shape, generator=gen)).item()


def parse_config():
    p = argparse.ArgumentParser(description=__doc__)
    for f in fields(Config):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    return Config(**vars(p.parse_args()))


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    trainer = Trainer(Denoiser(cfg.hidden, cfg.n_levels), cfg)
    trainer.fit()
    print(f"eval loss {trainer.evaluate():.5f}")
    print(f"checksum {sum(p.abs().sum() for p in trainer.model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
