"""Sparse attention pooling (sparsemax, Martins & Astudillo 2016) over padded sequences."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SparsemaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        sorted_z, _ = z.sort(-1, descending=True)
        cssv = sorted_z.cumsum(-1) - 1
        rng = torch.arange(1, z.size(-1) + 1, dtype=z.dtype)
        support = rng * sorted_z > cssv
        k = support.sum(-1, keepdim=True)
        tau = cssv.gather(-1, k - 1) / k.to(z.dtype)
        out = torch.clamp(z - tau, min=0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        out, = ctx.saved_tensors
        supp = (out > 0).to(grad_out.dtype)
        v = (grad_out * supp).sum(-1, keepdim=True) / supp.sum(-1, keepdim=True)
        return supp * (grad_out - v)


sparsemax = SparsemaxFunction.apply


class SparseAttnPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query = nn.Parameter(torch.randn(dim) / math.sqrt(dim))
        self.scale = 1.0 / math.sqrt(dim)

    def forward(self, h, pad):
        scores = (h @ self.query) * self.scale * 4.0
        attn = sparsemax(scores)
        attn.masked_fill_(pad, 0.0)
        return (attn.unsqueeze(-1) * h).sum(1), attn


class Classifier(nn.Module):
    def __init__(self, vocab, dim, n_cls):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.pool = SparseAttnPool(dim)
        self.out = nn.Linear(dim, n_cls)

    def forward(self, ids):
        pad = ids.eq(0)
        h, _ = self.rnn(self.emb(ids))
        pooled, attn = self.pool(h, pad)
        return self.out(pooled), attn


def make_batch(n, max_len, vocab, gen):
    lengths = torch.randint(3, max_len + 1, (n,), generator=gen)
    ids = torch.randint(1, vocab, (n, max_len), generator=gen)
    ids[torch.arange(max_len)[None, :] >= lengths[:, None]] = 0
    y = ((ids == 7).any(1) | (ids == 3).any(1)).long()
    return ids, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--max-len", type=int, default=12)
    p.add_argument("--lr", type=float, default=5e-3)
    args = p.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = Classifier(20, args.dim, 2)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for step in range(args.steps):
        ids, y = make_batch(16, args.max_len, 20, gen)
        logits, attn = model(ids)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 8 == 0 or step == args.steps - 1:
            print(f"step {step} loss {loss.item():.6f} attn_nnz {(attn > 0).float().mean().item():.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
