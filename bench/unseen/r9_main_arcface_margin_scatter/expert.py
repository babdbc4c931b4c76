"""Metric learning with an additive angular margin (ArcFace) head on synthetic identities."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ArcMarginProduct(nn.Module):
    """cos(theta + m) for the target class, cos(theta) elsewhere, scaled by s."""

    def __init__(self, in_features, n_classes, s=16.0, m=0.3):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_classes, in_features))
        nn.init.xavier_uniform_(self.weight)
        self.s, self.m = s, m
        self.cos_m, self.sin_m = math.cos(m), math.sin(m)
        self.th = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m

    def forward(self, emb, label):
        cosine = F.linear(F.normalize(emb), F.normalize(self.weight))
        sine = torch.sqrt((1.0 - cosine.pow(2)).clamp(1e-7, 1.0))
        phi = cosine * self.cos_m - sine * self.sin_m
        phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        # write the margin logit of the target class only (no one-hot matrix needed)
        idx = label.view(-1, 1)
        output = cosine.scatter(1, idx, phi.gather(1, idx))
        return output * self.s


class Embedder(nn.Module):
    def __init__(self, in_dim, emb_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, emb_dim))

    def forward(self, x):
        return self.net(x)


def make_identities(n, in_dim, n_classes, gen):
    centers = torch.randn(n_classes, in_dim, generator=torch.Generator().manual_seed(17))
    y = torch.randint(0, n_classes, (n,), generator=gen)
    return centers[y] + 0.9 * torch.randn(n, in_dim, generator=gen), y


@torch.no_grad()
def evaluate(embedder, head, x, y):
    embedder.eval()
    cos = F.linear(F.normalize(embedder(x)), F.normalize(head.weight))
    return (cos.argmax(1) == y).float().mean().item(), cos.max(1).values.mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--emb-dim", type=int, default=16)
    p.add_argument("--margin", type=float, default=0.3)
    p.add_argument("--scale", type=float, default=16.0)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=8)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(args.seed)
    x_tr, y_tr = make_identities(640, 24, args.classes, gen)
    x_va, y_va = make_identities(200, 24, args.classes, gen)
    embedder = Embedder(24, args.emb_dim)
    head = ArcMarginProduct(args.emb_dim, args.classes, s=args.scale, m=args.margin)
    opt = torch.optim.SGD(list(embedder.parameters()) + list(head.parameters()), lr=args.lr,
                          momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    for epoch in range(args.epochs):
        embedder.train()
        perm = torch.randperm(x_tr.size(0), generator=gen)
        total = 0.0
        for i in range(0, x_tr.size(0), args.batch_size):
            idx = perm[i:i + args.batch_size]
            logits = head(embedder(x_tr[idx]), y_tr[idx])
            loss = F.cross_entropy(logits, y_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        sched.step()
        acc, mean_cos = evaluate(embedder, head, x_va, y_va)
        print(f"epoch {epoch} loss {total / x_tr.size(0):.5f} val_acc {acc:.4f} mean_max_cos {mean_cos:.5f}")
    print(f"class-center norm {head.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
