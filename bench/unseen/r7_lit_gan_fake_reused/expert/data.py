import math

import torch
from torch.utils.data import DataLoader, TensorDataset


def ring_of_gaussians(n, modes=8, radius=2.0, std=0.05, seed=1):
    g = torch.Generator().manual_seed(seed)
    k = torch.randint(0, modes, (n,), generator=g).float()
    angle = 2 * math.pi * k / modes
    centers = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)
    return centers + std * torch.randn(n, 2, generator=g)


def make_loader(n=512, batch_size=64):
    return DataLoader(TensorDataset(ring_of_gaussians(n)), batch_size=batch_size, shuffle=False)
