import torch
import torch.nn as nn


class Generator(nn.Module):
    """Maps random ideas to a 'painting' (a curve sampled at ART_COMPONENTS points)."""

    def __init__(self, n_ideas, n_points, hidden=64):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(n_ideas, hidden),
            nn.ReLU(),
            nn.Linear(hidden, n_points),
        )
        # learnable per-point amplitude, so the output is not stuck in [-1, 1]
        self.amplitude = nn.Parameter(torch.full((n_points,), 1.2))

    def forward(self, z):
        out = torch.tanh(self.body(z))
        out *= self.amplitude
        return out


class Discriminator(nn.Module):
    def __init__(self, n_points, hidden=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_points, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.net(x)
