import math

import torch


def make_streams(n_streams, length, seed):
    """Noisy sums of two sines with a slowly drifting level; the drift is what the
    carried hidden state has to track across windows."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length + 1, dtype=torch.float32)
    f1 = 0.05 + 0.1 * torch.rand(n_streams, 1, generator=g)
    f2 = 0.2 + 0.1 * torch.rand(n_streams, 1, generator=g)
    phase = 2 * math.pi * torch.rand(n_streams, 1, generator=g)
    drift = torch.cumsum(0.05 * torch.randn(n_streams, length + 1, generator=g), dim=1)
    x = torch.sin(f1 * t + phase) + 0.5 * torch.sin(f2 * t) + drift
    x = x + 0.1 * torch.randn(n_streams, length + 1, generator=g)
    return x.unsqueeze(-1)           # [streams, length + 1, 1]


def windows(series, window):
    """Consecutive, non-overlapping windows in time order (stateful training):
    window k of every stream continues window k - 1 of the same stream."""
    length = series.size(1) - 1
    for start in range(0, length - window + 1, window):
        chunk = series[:, start:start + window + 1]
        yield chunk[:, :-1], chunk[:, 1:]
