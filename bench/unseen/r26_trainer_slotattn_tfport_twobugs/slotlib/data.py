"""Tiny multi-object images: two coloured squares/discs on a dark background."""
import torch


def make_sprites(n, size, gen):
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    imgs = torch.zeros(n, 3, size, size)
    for i in range(n):
        for _ in range(2):
            color = torch.rand(3, generator=gen) * 0.8 + 0.2
            cy, cx = torch.randint(3, size - 3, (2,), generator=gen).tolist()
            r = int(torch.randint(2, 4, (1,), generator=gen))
            if torch.rand(1, generator=gen) < 0.5:
                mask = ((yy - cy).abs() <= r) & ((xx - cx).abs() <= r)
            else:
                mask = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
            imgs[i][:, mask] = color[:, None]
    return imgs * 2 - 1
