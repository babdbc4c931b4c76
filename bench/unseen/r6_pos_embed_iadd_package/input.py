"""Order-sensitive sequence classification with a small post-norm Transformer encoder.
Run: python input.py [--epochs N]"""
import argparse

import torch
import torch.nn.functional as F

from models import SequenceClassifier


def make_data(n, seq_len, in_dim):
    x = 0.3 * torch.randn(n, seq_len, in_dim)
    t_a = torch.randint(0, seq_len, (n,))
    t_b = torch.randint(0, seq_len, (n,))
    x[torch.arange(n), t_a, 0] += 2.0
    x[torch.arange(n), t_b, 1] += 2.0
    return x, (t_a < t_b).long()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--d_model", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    seq_len, in_dim = 12, 6
    x_train, y_train = make_data(512, seq_len, in_dim)
    x_val, y_val = make_data(256, seq_len, in_dim)
    model = SequenceClassifier(in_dim, args.d_model, 4, 64, args.layers, seq_len, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(x_train.size(0))
        total = 0.0
        for i in range(0, x_train.size(0), args.batch_size):
            idx = perm[i:i + args.batch_size]
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * idx.numel()
        model.eval()
        with torch.no_grad():
            val_acc = (model(x_val).argmax(1) == y_val).float().mean().item()
        print(f"epoch {epoch} loss {total / x_train.size(0):.4f} val acc {val_acc:.4f}")

    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
