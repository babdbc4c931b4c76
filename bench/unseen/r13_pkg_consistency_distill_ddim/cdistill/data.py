import math

import torch


def sample_ring(n, n_modes, radius, std, generator):
    k = torch.randint(0, n_modes, (n,), generator=generator)
    ang = 2 * math.pi * k.float() / n_modes
    centers = torch.stack([radius * torch.cos(ang), radius * torch.sin(ang)], dim=1)
    return centers + std * torch.randn(n, 2, generator=generator)


def mode_distance(x, n_modes, radius):
    ang = 2 * math.pi * torch.arange(n_modes).float() / n_modes
    centers = torch.stack([radius * torch.cos(ang), radius * torch.sin(ang)], dim=1)
    return torch.cdist(x, centers).min(dim=1).values.mean().item()
