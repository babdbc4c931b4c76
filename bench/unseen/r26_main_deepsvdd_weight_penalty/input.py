"""One-class Deep SVDD on tabular data (pyod-style fit loop).

Normal samples lie near a 3-d subspace of R^10; anomalies are scattered uniformly.
The network (bias-free, as Deep SVDD requires) maps data near a fixed centre c,
and the anomaly score is the squared distance to c.
"""
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class Config:
    n_features: int = 10
    hidden: tuple = (32, 16)
    rep_dim: int = 8
    n_train: int = 768
    n_test: int = 256
    epochs: int = 8
    batch_size: int = 64
    lr: float = 1e-3
    l2_regularizer: float = 0.1
    eps: float = 0.1
    seed: int = 0
    verbose: bool = True


class SVDDNet(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        dims = [cfg.n_features, *cfg.hidden, cfg.rep_dim]
        layers = []
        for i in range(len(dims) - 1):
            layers.append(nn.Linear(dims[i], dims[i + 1], bias=False))
            if i < len(dims) - 2:
                layers.append(nn.LeakyReLU(0.1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def make_data(cfg: Config, gen):
    basis = torch.randn(3, cfg.n_features, generator=gen)

    def normal(n):
        z = torch.randn(n, 3, generator=gen)
        return torch.tanh(z @ basis) + 0.05 * torch.randn(n, cfg.n_features, generator=gen)

    x_train = normal(cfg.n_train)
    x_test = normal(cfg.n_test)
    x_anom = torch.rand(cfg.n_test // 4, cfg.n_features, generator=gen) * 2 - 1
    return x_train, x_test, x_anom


@torch.no_grad()
def init_center_c(net, x, eps):
    c = net(x).mean(dim=0)
    # keep c away from 0, otherwise a bias-free net can trivially map everything there
    c[(abs(c) < eps) & (c < 0)] = -eps
    c[(abs(c) < eps) & (c > 0)] = eps
    return c


def auc(scores_normal, scores_anom):
    s = torch.cat([scores_normal, scores_anom])
    y = torch.cat([torch.zeros(len(scores_normal)), torch.ones(len(scores_anom))])
    order = torch.argsort(s)
    ranks = torch.empty_like(s)
    ranks[order] = torch.arange(1, len(s) + 1, dtype=s.dtype)
    n_pos, n_neg = y.sum(), (1 - y).sum()
    return ((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def main(cfg: Config = Config()):
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    x_train, x_test, x_anom = make_data(cfg, gen)
    mu, sd = x_train.mean(0), x_train.std(0)
    x_train, x_test, x_anom = [(x - mu) / sd for x in (x_train, x_test, x_anom)]

    net = SVDDNet(cfg)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    c = init_center_c(net, x_train, cfg.eps)

    # L2 penalty on the weights (pyod DeepSVDD's l2_regularizer)
    w_d = cfg.l2_regularizer * sum([torch.linalg.norm(w) for w in net.parameters()])

    for epoch in range(cfg.epochs):
        net.train()
        perm = torch.randperm(cfg.n_train, generator=gen)
        epoch_loss, n_batches = 0.0, 0
        for i in range(0, cfg.n_train, cfg.batch_size):
            x = x_train[perm[i:i + cfg.batch_size]]
            outputs = net(x)
            dist = torch.sum((outputs - c) ** 2, dim=-1)
            loss = torch.mean(dist) + w_d
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
            n_batches += 1
        net.eval()
        with torch.no_grad():
            s_norm = torch.sum((net(x_test) - c) ** 2, dim=-1)
            s_anom = torch.sum((net(x_anom) - c) ** 2, dim=-1)
        if cfg.verbose:
            print(f"epoch {epoch} loss {epoch_loss / n_batches:.6f} score_normal {s_norm.mean().item():.6f} "
                  f"score_anomaly {s_anom.mean().item():.6f} auc {auc(s_norm, s_anom):.6f}")
    print(f"checksum {sum(p.sum().item() for p in net.parameters()):.6f}")


if __name__ == "__main__":
    main()
