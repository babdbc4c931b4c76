import torch


def binary_bars(n, size=8, seed=0):
    """Binary size x size images made of 1-3 random horizontal / vertical bars, flattened."""
    g = torch.Generator().manual_seed(seed)
    imgs = torch.zeros(n, size, size)
    for i in range(n):
        for _ in range(int(torch.randint(1, 4, (1,), generator=g))):
            k = int(torch.randint(0, size, (1,), generator=g))
            if torch.rand(1, generator=g) < 0.5:
                imgs[i, k, :] = 1.0
            else:
                imgs[i, :, k] = 1.0
    return imgs.view(n, -1)
