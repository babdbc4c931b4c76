import torch


def shells(n, dim, classes, gen):
    """Points on noisy concentric shells; the class is the shell index."""
    y = torch.randint(0, classes, (n,), generator=gen)
    direction = torch.nn.functional.normalize(torch.randn(n, dim, generator=gen), dim=1)
    radius = 1.0 + y.float() + 0.25 * torch.randn(n, generator=gen)
    return direction * radius[:, None], y
