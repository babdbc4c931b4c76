"""Sentence classification (BiGRU + attention pooling) on synthetic padded sequences.
Run: python input.py [--epochs N] [--lr LR]"""
import argparse

import torch
import torch.nn.functional as F

from mypkg.models import TextClassifier


def make_data(n, vocab_size, max_len, gen):
    lengths = torch.randint(5, max_len + 1, (n,), generator=gen)
    tokens = torch.randint(1, vocab_size, (n, max_len), generator=gen)
    tokens[torch.arange(max_len)[None, :] >= lengths[:, None]] = 0
    positive = ((tokens >= 1) & (tokens <= 6)).sum(1)
    negative = ((tokens >= 7) & (tokens <= 12)).sum(1)
    return tokens, (positive > negative).long()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab_size", type=int, default=60)
    parser.add_argument("--max_len", type=int, default=20)
    parser.add_argument("--emb_dim", type=int, default=24)
    parser.add_argument("--hidden", type=int, default=24)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)
    x_train, y_train = make_data(640, args.vocab_size, args.max_len, gen)
    x_val, y_val = make_data(256, args.vocab_size, args.max_len, gen)

    model = TextClassifier(args.vocab_size, args.emb_dim, args.hidden, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

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
            acc = (model(x_val).argmax(1) == y_val).float().mean().item()
        print(f"epoch {epoch} loss {total / x_train.size(0):.4f} val acc {acc:.4f}")

    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
