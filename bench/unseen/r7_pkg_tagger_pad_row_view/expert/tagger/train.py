"""BiLSTM sequence tagger. Run from the project root: python -m tagger.train [--epochs N ...]"""
import argparse

import torch

from .data import batches, make_corpus
from .engine import evaluate, train_epoch
from .model import BiLSTMTagger


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--emb-dim", type=int, default=24)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--max-len", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    train_w, train_t = make_corpus(800, args.max_len, seed=1)
    dev_w, dev_t = make_corpus(300, args.max_len, seed=2)
    model = BiLSTMTagger(args.emb_dim, args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)
    for epoch in range(args.epochs):
        loss = train_epoch(model, optimizer, batches(train_w, train_t, args.batch_size, gen))
        print(f"epoch {epoch} loss {loss:.4f} dev_acc {evaluate(model, dev_w, dev_t):.4f}")
    print(f"pad row norm {model.embed.weight[0].norm():.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
