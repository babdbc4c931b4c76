"""Pointer task: which of the 8 items in a set has the largest score under a
hidden linear probe?  A tiny attention encoder from the local `attnlib`
package answers per position."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from attnlib import EncoderBlock


class Pointer(nn.Module):
    def __init__(self, d_in=6, dim=16, depth=2):
        super().__init__()
        self.embed = nn.Linear(d_in, dim)
        self.blocks = nn.Sequential(*[EncoderBlock(dim) for _ in range(depth)])
        self.score = nn.Linear(dim, 1)

    def forward(self, items):
        return self.score(self.blocks(self.embed(items))).squeeze(-1)


def make_batch(n, gen, n_items=8, d_in=6):
    probe = torch.tensor([1.0, -0.5, 0.25, 0.0, 0.5, -1.0])
    items = torch.randn(n, n_items, d_in, generator=gen)
    return items, (items @ probe).argmax(dim=1)


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = Pointer()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    val_x, val_y = make_batch(512, torch.Generator().manual_seed(42))
    for step in range(1, 121):
        x, y = make_batch(32, gen)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 30 == 0:
            with torch.no_grad():
                acc = (model(val_x).argmax(1) == val_y).float().mean().item()
            print(f"step {step} loss {loss.item():.5f} val_acc {acc:.5f}")


if __name__ == "__main__":
    main()
