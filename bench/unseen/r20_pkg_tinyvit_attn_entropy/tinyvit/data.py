import torch


def make_blobs(n, img_size, noise, gen):
    """Class = quadrant that contains a bright 3x3 blob."""
    y = torch.randint(0, 4, (n,), generator=gen)
    imgs = noise * torch.randn(n, 1, img_size, img_size, generator=gen)
    half = img_size // 2
    for i in range(n):
        r0 = (int(y[i]) // 2) * half + int(torch.randint(0, half - 3, (1,), generator=gen))
        c0 = (int(y[i]) % 2) * half + int(torch.randint(0, half - 3, (1,), generator=gen))
        imgs[i, 0, r0:r0 + 3, c0:c0 + 3] += 1.5
    return imgs, y
