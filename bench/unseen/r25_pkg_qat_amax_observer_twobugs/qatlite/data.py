"""Synthetic classification data (Gaussian blobs pushed through a random rotation)."""
import torch


def make_dataset(n, n_features, n_classes, seed):
    g = torch.Generator().manual_seed(seed)
    centers = 0.6 * torch.randn(n_classes, n_features, generator=g)
    y = torch.randint(0, n_classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, n_features, generator=g)
    rot, _ = torch.linalg.qr(torch.randn(n_features, n_features, generator=g))
    return x @ rot, y


def batches(x, y, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(x), generator=g)
    for i in range(0, len(x), batch_size):
        idx = perm[i:i + batch_size]
        yield x[idx], y[idx]
