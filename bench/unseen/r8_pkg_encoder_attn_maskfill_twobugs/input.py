"""Which comes first, X or Y? A small pre-norm transformer encoder on padded sequences.
Run: python input.py [--epochs 8 --dim 32 ...]"""
import argparse

import torch

from seqcls.train import fit


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--max-len", type=int, default=20)
    p.add_argument("--vocab", type=int, default=30)
    p.add_argument("--smoothing", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    model = fit(p.parse_args())
    print(f"checksum {sum(q.abs().sum() for q in model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
