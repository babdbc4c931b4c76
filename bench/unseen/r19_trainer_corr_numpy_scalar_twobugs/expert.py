"""Multi-output expression regression with quality-weighted MSE plus a Pearson-correlation term.

The trainer reads config.json next to this file.
"""
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(cfg, gen):
    n = cfg["n_train"] + cfg["n_val"]
    x = torch.randn(n, cfg["in_features"], generator=gen)
    w = torch.randn(cfg["in_features"], cfg["out_features"], generator=gen) / cfg["in_features"] ** 0.5
    y = torch.tanh(x @ w) * 2.0 + 0.3 * torch.randn(n, cfg["out_features"], generator=gen)
    quality = 0.2 + 0.8 * torch.rand(n, generator=gen)          # per-sample measurement quality
    y = y + (1.0 - quality).unsqueeze(1) * torch.randn(n, cfg["out_features"], generator=gen)
    k = cfg["n_train"]
    return (x[:k], y[:k], quality[:k]), (x[k:], y[k:], quality[k:])


class Regressor(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(cfg["in_features"], cfg["hidden"]), nn.GELU(),
            nn.Linear(cfg["hidden"], cfg["hidden"]), nn.GELU(),
            nn.Linear(cfg["hidden"], cfg["out_features"]),
        )

    def forward(self, x):
        return self.net(x)


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        self.gen = torch.Generator().manual_seed(cfg["seed"])
        self.train_set, self.val_set = make_data(cfg, self.gen)
        self.model = Regressor(cfg)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"])
        self.step = 0

    def compute_loss(self, pred, target, weight):
        """Quality-weighted mean of the per-sample MSE, plus corr_weight * (1 - Pearson r)."""
        mse = F.mse_loss(pred, target, reduction="none").mean(dim=1)        # [B]
        weighted = (weight * mse).sum() / weight.sum()
        p = pred.flatten() - pred.mean()
        t = target.flatten() - target.mean()
        corr = (p * t).sum() / torch.sqrt((p * p).sum() * (t * t).sum())
        loss = weighted + self.cfg["corr_weight"] * (1.0 - corr)
        return loss, corr.detach()

    def train_step(self, x, y, q):
        self.model.train()
        pred = self.model(x)
        loss, corr = self.compute_loss(pred, y, q)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.step += 1
        return loss.item(), float(corr)

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        x, y, q = self.val_set
        pred = self.model(x)
        mse = F.mse_loss(pred, y, reduction="none").mean(dim=1)
        wmse = ((q * mse).sum() / q.sum()).item()
        corr = float(np.corrcoef(pred.numpy().ravel(), y.numpy().ravel())[0, 1])
        return wmse, corr

    def fit(self):
        x_tr, y_tr, q_tr = self.train_set
        bs = self.cfg["batch_size"]
        for epoch in range(1, self.cfg["epochs"] + 1):
            perm = torch.randperm(x_tr.size(0), generator=self.gen)
            losses, corrs = [], []
            for i in range(0, x_tr.size(0), bs):
                idx = perm[i:i + bs]
                loss, corr = self.train_step(x_tr[idx], y_tr[idx], q_tr[idx])
                losses.append(loss)
                corrs.append(corr)
            val_wmse, val_corr = self.evaluate()
            print(f"epoch {epoch}  train_loss {sum(losses) / len(losses):.5f}  "
                  f"train_corr {sum(corrs) / len(corrs):.5f}  val_wmse {val_wmse:.5f}  val_corr {val_corr:.5f}")
        norm = torch.sqrt(sum(p.detach().pow(2).sum() for p in self.model.parameters())).item()
        print(f"final  steps {self.step}  param_norm {norm:.5f}")


if __name__ == "__main__":
    with open(Path(__file__).with_name("config.json")) as f:
        config = json.load(f)
    Trainer(config).fit()
