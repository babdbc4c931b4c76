"""Shared token encoder with two ViT-style decoders (denoised reconstruction + per-patch
segment type), trained jointly. Run: python input.py [--epochs 5 --dim 32 ...]"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

N_TOKENS, PATCH, N_TYPES = 16, 8, 3


def make_signals(n, seed):
    """1-D signals of 16 patches x 8 samples; every patch is flat, a ramp or a sine
    (its segment type); inputs are noisy, reconstruction targets are clean."""
    g = torch.Generator().manual_seed(seed)
    types = torch.randint(0, N_TYPES, (n, N_TOKENS), generator=g)
    t = torch.linspace(0, 1, PATCH)
    amp = 0.2 + 0.6 * torch.rand(n, N_TOKENS, 1, generator=g)
    shapes = torch.stack([torch.ones(PATCH), 2 * t - 1, torch.sin(6.28 * t)])     # [3, 8]
    clean = amp * shapes[types]                                                   # [n, 16, 8]
    noisy = clean + 0.9 * torch.randn(clean.shape, generator=g)
    return noisy, clean, types


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Encoder(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.embed = nn.Linear(PATCH, dim)
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, patches):
        return self.norm(self.blocks(self.embed(patches)))


class TokenDecoder(nn.Module):
    def __init__(self, dim, depth, out_dim):
        super().__init__()
        self.pos_embedding = nn.Parameter(0.02 * torch.randn(1, N_TOKENS, dim))
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, out_dim)

    def forward(self, tokens):
        tokens = tokens + self.pos_embedding
        return self.head(self.blocks(tokens))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seg-weight", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    train = make_signals(512, seed=1)
    val = make_signals(256, seed=2)
    encoder = Encoder(args.dim, args.depth)
    rec_decoder = TokenDecoder(args.dim, args.depth, PATCH)
    seg_decoder = TokenDecoder(args.dim, 1, N_TYPES)
    params = [*encoder.parameters(), *rec_decoder.parameters(), *seg_decoder.parameters()]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=1e-4)

    for epoch in range(args.epochs):
        perm = torch.randperm(len(train[0]))
        rec_sum = seg_sum = 0.0
        steps = 0
        for i in range(0, len(perm), args.batch_size):
            idx = perm[i:i + args.batch_size]
            noisy, clean, types = train[0][idx], train[1][idx], train[2][idx]
            z = encoder(noisy)
            rec = rec_decoder(z)
            seg = seg_decoder(z)
            rec_loss = F.mse_loss(rec, clean)
            seg_loss = F.cross_entropy(seg.reshape(-1, N_TYPES), types.reshape(-1))
            loss = rec_loss + args.seg_weight * seg_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            rec_sum += rec_loss.item()
            seg_sum += seg_loss.item()
            steps += 1
        with torch.no_grad():
            z = encoder(val[0])
            val_rec = F.mse_loss(rec_decoder(z), val[1]).item()
            val_acc = (seg_decoder(z).argmax(-1) == val[2]).float().mean().item()
        print(f"epoch {epoch} rec {rec_sum / steps:.5f} seg {seg_sum / steps:.5f} "
              f"val_rec {val_rec:.5f} val_acc {val_acc:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in params).item():.4f}")


if __name__ == "__main__":
    main()
