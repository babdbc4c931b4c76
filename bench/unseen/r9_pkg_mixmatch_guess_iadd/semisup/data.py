import math

import torch


def two_spirals(n, noise, gen):
    """Two interleaved half-moons in 2-D, lifted to 8-D with a fixed random map."""
    y = torch.randint(0, 2, (n,), generator=gen)
    t = torch.rand(n, generator=gen) * math.pi
    x = torch.stack([torch.cos(t), torch.sin(t)], 1)
    x[y == 1] = torch.stack([1 - torch.cos(t[y == 1]), 0.5 - torch.sin(t[y == 1])], 1)
    x = x + noise * torch.randn(n, 2, generator=gen)
    lift = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))
    return torch.cat([x, torch.tanh(x @ lift)], 1), y


def augment(x, gen, std=0.08):
    return x + std * torch.randn(x.shape, generator=gen)


def batches(x, y, batch_size, gen):
    while True:
        perm = torch.randperm(x.size(0), generator=gen)
        for i in range(0, x.size(0) - batch_size + 1, batch_size):
            idx = perm[i:i + batch_size]
            yield x[idx], (y[idx] if y is not None else None)
