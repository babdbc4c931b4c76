import torch
from torch.utils.data import DataLoader, TensorDataset


def _true_mean(x, W):
    return torch.tanh(x @ W) + 0.3 * x[:, :1] ** 2


def _true_scale_tril(x):
    # noise grows with |x0| and its correlation flips with the sign of x1
    B = x.shape[0]
    L = torch.zeros(B, 3, 3)
    L[:, 0, 0] = 0.1 + 0.4 * x[:, 0].abs()
    L[:, 1, 1] = 0.2 + 0.1 * x[:, 2].sigmoid()
    L[:, 2, 2] = 0.15
    L[:, 1, 0] = 0.3 * torch.tanh(x[:, 1])
    L[:, 2, 1] = -0.2 * torch.tanh(x[:, 1])
    return L


def make_loaders(cfg, g):
    n = cfg.data.n_train + cfg.data.n_val
    W = torch.randn(cfg.data.in_dim, cfg.data.out_dim, generator=g)
    x = torch.randn(n, cfg.data.in_dim, generator=g)
    eps = torch.randn(n, cfg.data.out_dim, 1, generator=g)
    y = _true_mean(x, W) + (_true_scale_tril(x) @ eps).squeeze(-1)
    tr = TensorDataset(x[:cfg.data.n_train], y[:cfg.data.n_train])
    va = TensorDataset(x[cfg.data.n_train:], y[cfg.data.n_train:])
    train_loader = DataLoader(tr, batch_size=cfg.optim.batch_size, shuffle=True, generator=g)
    val_loader = DataLoader(va, batch_size=256)
    return train_loader, val_loader
