"""Synthetic query/document pairs: documents are a fixed nonlinear view of their query."""
import torch


def make_pairs(n, dim, noise, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(n, dim, generator=g)
    mix = torch.randn(dim, dim, generator=g) / dim ** 0.5
    d = torch.tanh(q @ mix) + noise * torch.randn(n, dim, generator=g)
    return q, d


def batch_iter(n, batch_size, steps, seed):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        yield torch.randperm(n, generator=g)[:batch_size]
