import torch


def make_images(n, img_size, seed):
    """Noisy grey images with one bright square; targets are (cx, cy, w, h) in pixels."""
    g = torch.Generator().manual_seed(seed)
    imgs = 0.2 * torch.rand(n, 1, img_size, img_size, generator=g)
    boxes = torch.empty(n, 4)
    for i in range(n):
        w = int(torch.randint(4, 13, (1,), generator=g))
        h = int(torch.randint(4, 13, (1,), generator=g))
        x0 = int(torch.randint(0, img_size - w + 1, (1,), generator=g))
        y0 = int(torch.randint(0, img_size - h + 1, (1,), generator=g))
        imgs[i, 0, y0:y0 + h, x0:x0 + w] += 0.8
        boxes[i] = torch.tensor([x0 + w / 2, y0 + h / 2, float(w), float(h)])
    return imgs, boxes


def batches(imgs, boxes, batch_size, gen):
    order = torch.randperm(len(imgs), generator=gen)
    for i in range(0, len(imgs), batch_size):
        idx = order[i:i + batch_size]
        yield imgs[idx], boxes[idx]
