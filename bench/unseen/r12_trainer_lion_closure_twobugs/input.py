"""Toy classifier trained with a hand-written Lion optimizer (Chen et al., 2023).

The Trainer always calls ``optimizer.step(closure)`` so that the same loop can also be
used with L-BFGS (``optimizer.name: lbfgs`` in the YAML file).
"""
import argparse
import math
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.optim import Optimizer


class Lion(Optimizer):
    """EvoLved Sign Momentum.  update = sign(beta1 * m + (1 - beta1) * g)."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        if lr <= 0:
            raise ValueError("lr must be positive")
        defaults = dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()

        for group in self.param_groups:
            lr, wd = group["lr"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]

                # decoupled weight decay
                p.mul_(1.0 - lr * wd)
                # sign update from the interpolated momentum
                update = exp_avg.clone().mul_(beta1).add_(grad, alpha=1.0 - beta1).sign_()
                p.add_(update, alpha=-lr)
                # momentum tracks the gradient with beta2
                exp_avg.mul_(beta2).add_(grad, alpha=1.0 - beta2)
        return loss


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    angle = y.float() * (2 * math.pi / 3) + 0.35 * torch.randn(n, generator=g)
    radius = 1.0 + 0.25 * torch.randn(n, generator=g)
    x = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)
    x = torch.cat([x, 0.3 * torch.randn(n, 2, generator=g)], dim=1)  # two noise features
    return x, y


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        h = cfg["hidden"]
        self.model = nn.Sequential(
            nn.Linear(4, h), nn.GELU(), nn.Linear(h, h), nn.GELU(), nn.Linear(h, 3)
        )
        ocfg = cfg["optimizer"]
        if ocfg["name"] == "lion":
            self.optimizer = Lion(self.model.parameters(), lr=ocfg["lr"],
                                  betas=ocfg["betas"], weight_decay=ocfg["weight_decay"])
        else:
            self.optimizer = torch.optim.LBFGS(self.model.parameters(), lr=ocfg["lr"])
        self.x_train, self.y_train = make_data(cfg["n_train"], cfg["seed"] + 1)
        self.x_val, self.y_val = make_data(cfg["n_val"], cfg["seed"] + 2)

    def train_step(self, xb, yb):
        self.model.train()

        def closure():
            self.optimizer.zero_grad()
            logits = self.model(xb)
            loss = F.cross_entropy(logits, yb)
            loss.backward()
            return loss

        loss = self.optimizer.step(closure)
        return float(loss)

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        logits = self.model(self.x_val)
        loss = F.cross_entropy(logits, self.y_val).item()
        acc = (logits.argmax(1) == self.y_val).float().mean().item()
        return loss, acc

    def fit(self):
        bs = self.cfg["batch_size"]
        g = torch.Generator().manual_seed(self.cfg["seed"] + 3)
        for epoch in range(1, self.cfg["epochs"] + 1):
            perm = torch.randperm(self.x_train.shape[0], generator=g)
            total, n = 0.0, 0
            for i in range(0, perm.numel(), bs):
                idx = perm[i:i + bs]
                total += self.train_step(self.x_train[idx], self.y_train[idx]) * idx.numel()
                n += idx.numel()
            val_loss, val_acc = self.evaluate()
            print(f"epoch {epoch} train_loss {total / n:.5f} val_loss {val_loss:.5f} val_acc {val_acc:.4f}")
        w = sum(p.abs().sum().item() for p in self.model.parameters())
        print(f"param L1 {w:.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(Path(__file__).with_name("lion.yaml")))
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    Trainer(cfg).fit()


if __name__ == "__main__":
    main()
