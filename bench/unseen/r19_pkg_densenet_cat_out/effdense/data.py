import torch


def _pattern(label, size, gen):
    img = torch.zeros(3, size, size)
    pos = int(torch.randint(2, size - 2, (1,), generator=gen))
    if label == 0:                       # horizontal bar
        img[:, pos - 1:pos + 1, :] = 1.0
    elif label == 1:                     # vertical bar
        img[:, :, pos - 1:pos + 1] = 1.0
    elif label == 2:                     # diagonal
        idx = torch.arange(size)
        img[:, idx, idx] = 1.0
        img[:, idx[1:], idx[:-1]] = 1.0
    else:                                # centered blob
        c = size // 2
        img[:, c - 2:c + 2, c - 2:c + 2] = 1.0
    colour = 0.5 + 0.5 * torch.rand(3, 1, 1, generator=gen)
    return img * colour


def make_split(n, size, num_classes, gen):
    labels = torch.randint(0, num_classes, (n,), generator=gen)
    images = torch.stack([_pattern(int(l), size, gen) for l in labels])
    images = images + 0.6 * torch.randn(images.shape, generator=gen)
    return images, labels


def batches(images, labels, batch_size, gen=None):
    n = images.size(0)
    order = torch.randperm(n, generator=gen) if gen is not None else torch.arange(n)
    for i in range(0, n, batch_size):
        idx = order[i:i + batch_size]
        yield images[idx], labels[idx]
