import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import MultivariateNormal


class MLPTrunk(nn.Module):
    def __init__(self, in_dim, hidden, depth):
        super().__init__()
        layers, d = [], in_dim
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.GELU()]
            d = hidden
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class CholeskyGaussianHead(nn.Module):
    """Predicts a mean and a lower-triangular scale with a positive diagonal."""

    def __init__(self, hidden, out_dim, min_std):
        super().__init__()
        self.out_dim = out_dim
        self.min_std = min_std
        self.mean = nn.Linear(hidden, out_dim)
        self.tril = nn.Linear(hidden, out_dim * (out_dim + 1) // 2)
        self.register_buffer("tril_idx", torch.tril_indices(out_dim, out_dim))

    def forward(self, h):
        mu = self.mean(h)
        L = h.new_zeros(h.shape[0], self.out_dim, self.out_dim)
        L[:, self.tril_idx[0], self.tril_idx[1]] = self.tril(h)
        diag = F.softplus(L.diagonal(dim1=-2, dim2=-1)) + self.min_std
        L = L.tril(-1) + torch.diag_embed(diag)
        return mu, L


class HeteroscedasticRegressor(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.trunk = MLPTrunk(cfg.data.in_dim, cfg.model.hidden, cfg.model.depth)
        self.head = CholeskyGaussianHead(cfg.model.hidden, cfg.data.out_dim, cfg.model.min_std)

    def forward(self, x):
        mu, L = self.head(self.trunk(x))
        return MultivariateNormal(mu, scale_tril=L)
