"""Conditional affine-coupling flow for 2-D targets (RealNVP-style)."""
import math

import torch
import torch.nn as nn


class ActNorm(nn.Module):
    """Per-dimension affine with data-dependent initialisation (Kingma & Dhariwal, 2018)."""

    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.log_scale = nn.Parameter(torch.zeros(dim))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def forward(self, z):
        if not self.initialized:
            with torch.no_grad():
                self.loc.copy_(-z.mean(0))
                self.log_scale.copy_(-torch.log(z.std(0) + 1e-6))
                self.initialized.fill_(1)
        out = (z + self.loc) * self.log_scale.exp()
        return out, self.log_scale.sum().expand(z.shape[0])


class Conditioner(nn.Module):
    def __init__(self, in_dim, cond_dim, hidden, out_dim):
        super().__init__()
        self.fc1 = nn.Linear(in_dim + cond_dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 2 * out_dim)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, za, c):
        h = self.fc1(torch.cat([za, c], 1)).relu_()        # relu_ on a fresh Linear output
        h = h + self.fc2(h).relu_()
        st = self.out(h)
        st[:, 1:] *= 0.5                                    # damp the shift, st not saved yet
        return st.chunk(2, dim=1)


class AffineCoupling(nn.Module):
    def __init__(self, cond_dim, hidden, flip):
        super().__init__()
        self.flip = flip
        self.net = Conditioner(1, cond_dim, hidden, 1)
        self.s_scale = nn.Parameter(torch.ones(1))

    def forward(self, z, c):
        za, zb = (z[:, 1:], z[:, :1]) if self.flip else (z[:, :1], z[:, 1:])
        raw_s, t = self.net(za, c)
        s = self.s_scale * torch.tanh(raw_s)
        zb = zb * s.exp() + t
        out = torch.cat([zb, za], 1) if self.flip else torch.cat([za, zb], 1)
        return out, s.sum(1)


class ConditionalFlow(nn.Module):
    def __init__(self, cond_dim, hidden=32, n_layers=4):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(n_layers):
            self.layers.append(ActNorm(2))
            self.layers.append(AffineCoupling(cond_dim, hidden, flip=bool(i % 2)))

    def log_prob(self, y, c):
        z = y
        log_det = torch.zeros(y.shape[0])
        for layer in self.layers:
            z, ld = layer(z, c) if isinstance(layer, AffineCoupling) else layer(z)
            log_det += ld
        base = z.pow(2).sum(1).mul_(-0.5).sub_(math.log(2 * math.pi))
        return base + log_det
