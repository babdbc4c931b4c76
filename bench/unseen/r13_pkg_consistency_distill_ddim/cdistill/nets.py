import math

import torch
import torch.nn as nn

from .schedule import alpha, sigma


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(1000.0) * torch.arange(half).float() / half)
    args = t[:, None] * 1000.0 * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=1)


class TimeMLP(nn.Module):
    """Epsilon-prediction network eps(x, t) for 2-D data."""

    def __init__(self, hidden=64, t_dim=16):
        super().__init__()
        self.t_dim = t_dim
        self.inp = nn.Linear(2, hidden)
        self.temb = nn.Linear(t_dim, hidden)
        self.body = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                  nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 2))

    def forward(self, x, t):
        return self.body(self.inp(x) + self.temb(timestep_embedding(t, self.t_dim)))


class ConsistencyModel(nn.Module):
    """x0-parametrised consistency function f(x, t) = (x - sigma(t) F(x, t)) / alpha(t).

    F starts as a copy of the teacher's epsilon network; f(x, t_min) ~= x.
    """

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, t):
        return (x - sigma(t)[:, None] * self.net(x, t)) / alpha(t)[:, None]
