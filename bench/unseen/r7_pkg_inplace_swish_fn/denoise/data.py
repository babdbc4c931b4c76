import math

import torch


def make_signals(n, length, noise_std, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, length)
    freq = 1 + 3 * torch.rand(n, 2, generator=g)
    phase = 2 * math.pi * torch.rand(n, 2, generator=g)
    amp = 0.5 + torch.rand(n, 2, generator=g)
    clean = (amp[:, :1] * torch.sin(2 * math.pi * freq[:, :1] * t + phase[:, :1])
             + amp[:, 1:] * torch.sign(torch.sin(2 * math.pi * freq[:, 1:] * t + phase[:, 1:])) * 0.5)
    noisy = clean + noise_std * torch.randn(n, length, generator=g)
    return noisy, clean
