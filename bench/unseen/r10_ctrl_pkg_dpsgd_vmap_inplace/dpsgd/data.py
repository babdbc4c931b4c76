import torch


def tabular(n, dim, gen):
    w = torch.randn(dim, generator=torch.Generator().manual_seed(31))
    x = torch.randn(n, dim, generator=gen)
    logits = x @ w + 0.5 * (x[:, 0] * x[:, 1])
    y = (logits + 0.3 * torch.randn(n, generator=gen) > 0).long()
    return x, y
