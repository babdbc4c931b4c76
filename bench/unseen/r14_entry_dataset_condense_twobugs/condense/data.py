import torch


def make_blobs(n, num_classes, size, gen, noise=0.6):
    """8x8 single-channel images: each class is a bright blob at its own location, plus noise."""
    y = torch.arange(n) % num_classes
    y = y[torch.randperm(n, generator=gen)]
    coords = torch.stack(torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij"), -1).float()
    centers = torch.tensor([[2.0, 2.0], [2.0, 5.0], [5.0, 2.0], [5.0, 5.0]])[:num_classes]
    jitter = 0.8 * torch.randn(n, 2, generator=gen)
    c = (centers[y] + jitter).view(n, 1, 1, 2)
    blob = torch.exp(-((coords - c) ** 2).sum(-1) / 3.0)
    x = blob + noise * torch.randn(n, size, size, generator=gen)
    return x.unsqueeze(1), y
