"""Long-tailed classification with logit-adjusted cross-entropy (Menon et al., ICLR 2021):
train on logits + tau * log(prior). Run: python input.py [--tau T]"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def long_tailed_labels(n, num_classes, imbalance, gen):
    probs = imbalance ** (-torch.arange(num_classes, dtype=torch.float32) / (num_classes - 1))
    return torch.multinomial(probs / probs.sum(), n, replacement=True, generator=gen)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_classes", type=int, default=10)
    parser.add_argument("--in_dim", type=int, default=16)
    parser.add_argument("--n_train", type=int, default=800)
    parser.add_argument("--imbalance", type=float, default=300.0)
    parser.add_argument("--tau", type=float, default=1.0)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(3)
    centers = 1.5 * torch.randn(args.num_classes, args.in_dim, generator=gen)
    y_train = long_tailed_labels(args.n_train, args.num_classes, args.imbalance, gen)
    x_train = centers[y_train] + torch.randn(args.n_train, args.in_dim, generator=gen)
    y_test = torch.arange(args.num_classes).repeat_interleave(40)
    x_test = centers[y_test] + torch.randn(len(y_test), args.in_dim, generator=gen)
    print("train counts", torch.bincount(y_train).tolist())

    counts = torch.bincount(y_train, minlength=args.num_classes)
    prior = counts.float() / counts.sum()
    log_prior = torch.log(prior + 1e-12)

    model = nn.Sequential(nn.Linear(args.in_dim, 64), nn.ReLU(inplace=True), nn.Linear(64, args.num_classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(args.n_train)
        total = 0.0
        for i in range(0, args.n_train, args.batch_size):
            idx = perm[i:i + args.batch_size]
            logits = model(x_train[idx])
            logits += args.tau * log_prior
            loss = F.cross_entropy(logits, y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * idx.numel()
        model.eval()
        with torch.no_grad():
            pred = model(x_test).argmax(1)
        per_class = torch.stack([(pred[y_test == c] == c).float().mean() for c in range(args.num_classes)])
        print(f"epoch {epoch} loss {total / args.n_train:.4f} balanced acc {per_class.mean().item():.4f} "
              f"tail acc {per_class[-3:].mean().item():.4f}")

    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
