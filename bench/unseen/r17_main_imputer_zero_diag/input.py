"""Linear-Gaussian imputer for tabular data: every column is predicted from the
*other* columns (zero-diagonal weight), trained on rows with random holes."""
import argparse
from dataclasses import dataclass, fields

import torch
import torch.nn as nn


@dataclass
class Config:
    n_rows: int = 512
    n_cols: int = 8
    missing: float = 0.25
    steps: int = 150
    lr: float = 0.02
    weight_decay: float = 1e-4
    log_every: int = 30
    seed: int = 0


def parse_config():
    ap = argparse.ArgumentParser()
    for f in fields(Config):
        ap.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Config(**vars(ap.parse_args()))


class ColumnImputer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.W = nn.Parameter(0.1 * torch.randn(d, d))
        self.b = nn.Parameter(torch.zeros(d))

    def project_(self):
        """No column may look at itself: keep diag(W) at exactly zero."""
        self.W.diagonal().zero_()

    def forward(self, x_obs, mask):
        # column means (bias) where nothing is observed, linear prediction otherwise
        return (x_obs * mask) @ self.W.T + self.b


def make_data(cfg):
    g = torch.Generator().manual_seed(cfg.seed)
    A = torch.randn(cfg.n_cols, 3, generator=g)
    z = torch.randn(cfg.n_rows, 3, generator=g)
    x = z @ A.T + 0.3 * torch.randn(cfg.n_rows, cfg.n_cols, generator=g) + 1.0
    return x


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    x = make_data(cfg)
    model = ColumnImputer(cfg.n_cols)
    model.project_()
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    for step in range(1, cfg.steps + 1):
        mask = (torch.rand(x.shape) > cfg.missing).float()
        pred = model(x, mask)
        loss = ((pred - x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.project_()
        if step % cfg.log_every == 0:
            with torch.no_grad():
                holes = 1 - mask
                rmse = (((pred - x) ** 2 * holes).sum() / holes.sum()).sqrt()
            print(f"step {step} loss {loss.item():.5f} hole_rmse {rmse.item():.5f} "
                  f"|W| {model.W.abs().sum().item():.5f}")


if __name__ == "__main__":
    main()
