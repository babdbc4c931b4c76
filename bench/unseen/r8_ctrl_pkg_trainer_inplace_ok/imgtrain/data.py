import torch


def make_images(n, size, seed):
    """Three classes of 1 x size x size images: a horizontal bar, a vertical bar, a blob."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    x = 0.5 * torch.randn(n, 1, size, size, generator=g)
    pos = torch.randint(2, size - 2, (n,), generator=g)
    for i in range(n):
        k = int(pos[i])
        if y[i] == 0:
            x[i, 0, k - 1:k + 1, :] += 1.0
        elif y[i] == 1:
            x[i, 0, :, k - 1:k + 1] += 1.0
        else:
            x[i, 0, k - 2:k + 2, k - 2:k + 2] += 1.0
    return x, y


def normalize_(x):
    """In-place standardisation of a data tensor (no autograd involved)."""
    mean, std = x.mean(), x.std()
    return x.sub_(mean).div_(std)


def cutout(x, gen, size=3):
    x = x.clone()
    n, _, h, w = x.shape
    ys = torch.randint(0, h - size, (n,), generator=gen)
    xs = torch.randint(0, w - size, (n,), generator=gen)
    for i in range(n):
        x[i, :, ys[i]:ys[i] + size, xs[i]:xs[i] + size] = 0.0
    return x
