"""python -m tagger.train [--epochs N]"""
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from .data import ToySequences, pad_collate
from .model import Tagger


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    loader = DataLoader(ToySequences(256, seed=args.seed), batch_size=16, shuffle=True,
                        collate_fn=pad_collate, generator=torch.Generator().manual_seed(args.seed))
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(args.epochs):
        total, n = 0.0, 0
        for tokens, tags in loader:
            logits = model(tokens)
            loss = F.cross_entropy(logits.reshape(-1, 2), tags.reshape(-1), ignore_index=-100)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            n += 1
        print(f"epoch {epoch} loss {total / n:.4f}")


if __name__ == "__main__":
    main()
