"""Graph-level regression with a weighted message-passing network.

Training graphs are generated on the fly; the validation split is built from a
NumPy edge list (as it would come out of a preprocessing cache) and converted
with ``torch.from_numpy``.

Run:  python input.py
"""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class Config:
    n_train: int = 96
    n_val: int = 24
    nodes: tuple = (6, 14)
    features: int = 8
    hidden: int = 32
    layers: int = 3
    epochs: int = 4
    lr: float = 3e-3
    seed: int = 0


# ============================================================================ data
def target_fn(x, src, dst, w):
    return (w * (x[src, 0] * x[dst, 1])).sum() / len(w) + x[:, 2].mean()


def random_graph_torch(cfg, g):
    n = int(torch.randint(cfg.nodes[0], cfg.nodes[1], (1,), generator=g))
    x = torch.randn(n, cfg.features, generator=g)
    m = 3 * n
    src = torch.randint(0, n, (m,), generator=g)
    dst = torch.randint(0, n, (m,), generator=g)
    w = torch.rand(m, generator=g)
    return x, src, dst, w, target_fn(x, src, dst, w)


def random_graph_numpy(cfg, rng):
    n = int(rng.integers(cfg.nodes[0], cfg.nodes[1]))
    x = rng.standard_normal((n, cfg.features))
    m = 3 * n
    edges = rng.integers(0, n, size=(2, m))
    w = rng.random(m)
    x_t = torch.from_numpy(x).float()
    src, dst = torch.from_numpy(edges[0]), torch.from_numpy(edges[1])
    w_t = torch.from_numpy(w)
    return x_t, src, dst, w_t, target_fn(x_t, src, dst, w_t).float()


# ============================================================================ model
class WeightedConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin_msg = nn.Linear(d_in, d_out)
        self.lin_self = nn.Linear(d_in, d_out)

    def forward(self, x, src, dst, w):
        msg = self.lin_msg(x)[src] * w.unsqueeze(-1)
        agg = torch.zeros(x.shape[0], msg.shape[1], dtype=x.dtype).index_add_(0, dst, msg)
        deg = torch.zeros(x.shape[0], dtype=x.dtype).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        return F.silu(self.lin_self(x) + agg / deg.clamp(min=1).unsqueeze(-1))


class GraphRegressor(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        dims = [cfg.features] + [cfg.hidden] * cfg.layers
        self.convs = nn.ModuleList(WeightedConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.readout = nn.Linear(cfg.hidden, 1)

    def forward(self, x, src, dst, w):
        for conv in self.convs:
            x = conv(x, src, dst, w)
        return self.readout(x.mean(0)).squeeze()


# ============================================================================ main
def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    train = [random_graph_torch(cfg, g) for _ in range(cfg.n_train)]
    rng = np.random.default_rng(cfg.seed + 1)
    val = [random_graph_numpy(cfg, rng) for _ in range(cfg.n_val)]

    model = GraphRegressor(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        model.train()
        perm = torch.randperm(len(train), generator=torch.Generator().manual_seed(epoch))
        total = 0.0
        for i in perm.tolist():
            x, src, dst, w, y = train[i]
            loss = F.mse_loss(model(x, src, dst, w), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        model.eval()
        with torch.no_grad():
            val_mse = sum(F.mse_loss(model(x, s, d, w), y).item() for x, s, d, w, y in val) / len(val)
        print(f"epoch {epoch} train_mse {total / len(train):.6f} val_mse {val_mse:.6f}")
    checksum = sum(p.double().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
