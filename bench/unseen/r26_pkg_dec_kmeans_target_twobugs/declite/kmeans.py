import torch


def kmeans(x, k, iters, gen):
    """Plain Lloyd iterations with k-means++ seeding (stand-in for sklearn.cluster.KMeans)."""
    centers = x[torch.randint(0, x.size(0), (1,), generator=gen)]
    for _ in range(1, k):
        d = torch.cdist(x, centers).min(dim=1).values ** 2
        idx = torch.multinomial(d / d.sum(), 1, generator=gen)
        centers = torch.cat([centers, x[idx]], dim=0)
    for _ in range(iters):
        assign = torch.cdist(x, centers).argmin(dim=1)
        for j in range(k):
            if (assign == j).any():
                centers[j] = x[assign == j].mean(0)
    return centers, torch.cdist(x, centers).argmin(dim=1)
