import math

import torch


def make_blobs(cfg, gen):
    """Four 2-d Gaussian clusters pushed through a fixed random tanh map into R^n_features."""
    k = cfg.n_clusters
    angles = torch.arange(k, dtype=torch.float32) * (2 * math.pi / k)
    means = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1) * 2.5
    y = torch.randint(0, k, (cfg.n_samples,), generator=gen)
    z = means[y] + 0.6 * torch.randn(cfg.n_samples, 2, generator=gen)
    w1 = torch.randn(2, 16, generator=gen)
    w2 = torch.randn(16, cfg.n_features, generator=gen) / 4.0
    x = torch.tanh(z @ w1) @ w2 + 0.05 * torch.randn(cfg.n_samples, cfg.n_features, generator=gen)
    x = (x - x.mean(0)) / x.std(0)
    return x, y
