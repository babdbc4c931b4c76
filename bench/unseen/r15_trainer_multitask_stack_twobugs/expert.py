"""Multi-task tabular model: a shared encoder with a regression head and a classification
head, plus an auxiliary reconstruction head that has its own optimizer.

    python input.py [--config config.json]
"""
import argparse
import json
import os
from dataclasses import dataclass
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    in_dim: int
    hidden: int
    n_classes: int
    task_weights: List[float]
    aux_weight: float
    lr: float
    aux_lr: float
    batch_size: int
    epochs: int
    seed: int


class MultiTaskNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(cfg.in_dim, cfg.hidden), nn.Tanh(),
                                     nn.Linear(cfg.hidden, cfg.hidden), nn.Tanh())
        self.reg_head = nn.Linear(cfg.hidden, 1)
        self.cls_head = nn.Linear(cfg.hidden, cfg.n_classes)

    def forward(self, x):
        h = self.encoder(x)
        return h, self.reg_head(h).squeeze(-1), self.cls_head(h)


class MultiTaskTrainer:
    def __init__(self, cfg, data):
        self.cfg = cfg
        self.x, self.y_reg, self.y_cls = data
        self.model = MultiTaskNet(cfg)
        self.aux_head = nn.Linear(cfg.hidden, cfg.in_dim)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)
        self.aux_opt = torch.optim.Adam(self.aux_head.parameters(), lr=cfg.aux_lr)
        self.gen = torch.Generator().manual_seed(cfg.seed + 1)
        self.step = 0

    def task_losses(self, x, y_reg, y_cls):
        h, reg, logits = self.model(x)
        losses = [F.mse_loss(reg, y_reg), F.cross_entropy(logits, y_cls)]
        return h, losses

    def train_step(self, x, y_reg, y_cls):
        self.opt.zero_grad()
        self.aux_opt.zero_grad()
        h, losses = self.task_losses(x, y_reg, y_cls)
        weights = torch.tensor(self.cfg.task_weights)
        loss = (torch.stack(losses) * weights).sum()
        loss.backward(retain_graph=True)
        self.opt.step()

        # auxiliary reconstruction: only trains the auxiliary head
        aux_loss = self.cfg.aux_weight * F.mse_loss(self.aux_head(h.detach()), x)
        aux_loss.backward()
        self.aux_opt.step()
        return [l.item() for l in losses], aux_loss.item()

    def fit(self):
        n = self.x.shape[0]
        for epoch in range(self.cfg.epochs):
            perm = torch.randperm(n, generator=self.gen)
            for i in range(0, n, self.cfg.batch_size):
                idx = perm[i:i + self.cfg.batch_size]
                (l_reg, l_cls), l_aux = self.train_step(self.x[idx], self.y_reg[idx], self.y_cls[idx])
                self.step += 1
                if self.step % 10 == 0:
                    print(f"step {self.step:3d} reg {l_reg:.4f} cls {l_cls:.4f} aux {l_aux:.4f}")
        return self.evaluate()

    @torch.no_grad()
    def evaluate(self):
        h, reg, logits = self.model(self.x)
        acc = (logits.argmax(1) == self.y_cls).float().mean().item()
        mse = F.mse_loss(reg, self.y_reg).item()
        rec = F.mse_loss(self.aux_head(h), self.x).item()
        return acc, mse, rec


def make_data(cfg):
    g = torch.Generator().manual_seed(cfg.seed)
    x = torch.randn(256, cfg.in_dim, generator=g)
    w = torch.randn(cfg.in_dim, generator=g)
    y_reg = torch.sin(x @ w / 2)
    y_cls = (x[:, :cfg.n_classes] + 0.3 * torch.randn(256, cfg.n_classes, generator=g)).argmax(1)
    return x, y_reg, y_cls


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.json"))
    args = p.parse_args()
    with open(args.config) as f:
        cfg = Config(**json.load(f))
    torch.manual_seed(cfg.seed)
    trainer = MultiTaskTrainer(cfg, make_data(cfg))
    acc, mse, rec = trainer.fit()
    print(f"final acc {acc:.4f} mse {mse:.4f} recon {rec:.4f}")


if __name__ == "__main__":
    main()
