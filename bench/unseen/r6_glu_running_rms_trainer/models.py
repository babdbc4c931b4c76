import torch
import torch.nn as nn


class GLU(nn.Module):
    """Gated linear unit: value * sigmoid(gate)."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.proj = nn.Linear(d_in, 2 * d_out)

    def forward(self, x):
        value, gate = self.proj(x).chunk(2, dim=-1)
        out = torch.sigmoid(gate)
        out *= value
        return out


class RunningRMSNorm(nn.Module):
    """Scales features by a running RMS estimate instead of per-batch statistics."""

    def __init__(self, dim, momentum=0.9, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.rms = torch.ones(dim)

    def forward(self, x):
        if self.training:
            batch_rms = x.pow(2).mean(dim=0).add(self.eps).sqrt()
            self.rms = self.momentum * self.rms + (1 - self.momentum) * batch_rms
        return self.weight * x / self.rms


class GatedRegressor(nn.Module):
    def __init__(self, in_dim, hidden, out_dim):
        super().__init__()
        self.glu1 = GLU(in_dim, hidden)
        self.norm = RunningRMSNorm(hidden)
        self.glu2 = GLU(hidden, hidden)
        self.out = nn.Linear(hidden, out_dim)

    def forward(self, x):
        return self.out(self.glu2(self.norm(self.glu1(x))))
