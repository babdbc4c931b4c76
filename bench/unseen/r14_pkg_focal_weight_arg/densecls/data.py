import torch


def make_scenes(n, size, max_objects, num_classes, gen):
    """Images with a few 3x3 squares (class 0 bright, class 1 dark ring); target = centre heatmap
    on the stride-2 grid, one channel per class."""
    imgs = 0.3 * torch.randn(n, 1, size, size, generator=gen)
    grid = size // 2
    targets = torch.zeros(n, num_classes, grid, grid)
    for i in range(n):
        k = int(torch.randint(1, max_objects + 1, (1,), generator=gen))
        for _ in range(k):
            c = int(torch.randint(0, num_classes, (1,), generator=gen))
            gy, gx = torch.randint(1, grid - 1, (2,), generator=gen).tolist()
            y, x = 2 * gy, 2 * gx
            patch = torch.ones(3, 3) if c == 0 else torch.tensor([[1.0, 1.0, 1.0], [1.0, -1.5, 1.0], [1.0, 1.0, 1.0]])
            imgs[i, 0, y - 1:y + 2, x - 1:x + 2] += patch
            targets[i, c, gy, gx] = 1.0
    return imgs, targets
