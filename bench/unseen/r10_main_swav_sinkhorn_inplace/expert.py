"""SwAV-style online clustering (swapped prediction + Sinkhorn-Knopp codes) on synthetic blobs.

    python input.py --epochs 4 --prototypes 8
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class SwAVNet(nn.Module):
    def __init__(self, in_dim, hidden, feat_dim, n_prototypes):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                                     nn.Linear(hidden, feat_dim))
        self.prototypes = nn.Linear(feat_dim, n_prototypes, bias=False)

    def forward(self, x):
        z = F.normalize(self.encoder(x), dim=1)
        return z, self.prototypes(z)


@torch.no_grad()
def sinkhorn(scores, eps=0.05, n_iters=3):
    """Equipartitioned soft assignments (SwAV, Alg. 1): rows = prototypes, cols = samples."""
    Q = torch.exp(scores / eps).t()
    Q /= Q.sum()
    K, B = Q.shape
    for _ in range(n_iters):
        Q /= Q.sum(dim=1, keepdim=True)
        Q /= K
        Q /= Q.sum(dim=0, keepdim=True)
        Q /= B
    Q *= B
    return Q.t()


def blobs(n, dim, k, gen):
    centers = torch.randn(k, dim, generator=torch.Generator().manual_seed(21)) * 2.5
    y = torch.randint(0, k, (n,), generator=gen)
    return centers[y] + torch.randn(n, dim, generator=gen), y


def augment(x, gen):
    scale = 1 + 0.2 * torch.randn(x.size(0), 1, generator=gen)
    return x * scale + 0.4 * torch.randn(x.shape, generator=gen)


@torch.no_grad()
def purity(model, x, y, n_prototypes):
    model.eval()
    assign = model(x)[1].argmax(1)
    total = 0
    for c in range(n_prototypes):
        members = y[assign == c]
        if members.numel():
            total += members.bincount().max().item()
    return total / y.numel()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--prototypes", type=int, default=8)
    p.add_argument("--temperature", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=13)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(args.seed)
    x, y = blobs(2048, 12, 6, gen)
    model = SwAVNet(12, 64, 16, args.prototypes)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    print(f"initial purity {purity(model, x, y, args.prototypes):.4f}")

    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(x.size(0), generator=gen)
        total, n = 0.0, 0
        for idx in perm.split(args.batch_size):
            with torch.no_grad():   # keep the prototypes on the unit sphere
                model.prototypes.weight.copy_(F.normalize(model.prototypes.weight, dim=1))
            _, s1 = model(augment(x[idx], gen))
            _, s2 = model(augment(x[idx], gen))
            q1, q2 = sinkhorn(s1), sinkhorn(s2)
            p1 = F.log_softmax(s1 / args.temperature, dim=1)
            p2 = F.log_softmax(s2 / args.temperature, dim=1)
            loss = -0.5 * ((q1 * p2).sum(1).mean() + (q2 * p1).sum(1).mean())   # swapped prediction
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            n += 1
        print(f"epoch {epoch} swav_loss {total / n:.5f} purity {purity(model, x, y, args.prototypes):.4f}")
    with torch.no_grad():
        usage = model(x)[1].argmax(1).bincount(minlength=args.prototypes)
    print(f"prototype usage {usage.tolist()}")


if __name__ == "__main__":
    main()
