"""Transformer-XL style segment-recurrent language model on a synthetic token stream.

Each layer attends over [memory ; current segment]; the memory of a layer is the
last `mem_len` hidden states that entered it (segment-level recurrence).  A
learned relative-position bias replaces absolute positions so that memory works.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_table(vocab, gen):
    # second-order Markov chain with a few sharp transitions
    return torch.softmax(torch.randn(vocab, vocab, vocab, generator=gen) * 3.0, dim=-1)


def make_stream(n_tokens, table, gen):
    out = [0, 1]
    for _ in range(n_tokens - 2):
        probs = table[out[-2], out[-1]]
        out.append(int(torch.multinomial(probs, 1, generator=gen)))
    return torch.tensor(out)


def batchify(stream, bsz):
    n = stream.numel() // bsz
    return stream[: n * bsz].view(bsz, n)


class RelMultiHeadAttn(nn.Module):
    def __init__(self, d_model, n_head, max_dist):
        super().__init__()
        self.n_head, self.d_head = n_head, d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.max_dist = max_dist
        self.rel_bias = nn.Parameter(torch.zeros(n_head, max_dist + 1))

    def forward(self, h, mem):
        B, T, D = h.shape
        cat = h if mem is None else torch.cat([mem, h], dim=1)
        M = cat.shape[1] - T
        q = self.qkv(h)[..., :D]
        kv = self.qkv(cat)[..., D:]
        k, v = kv.chunk(2, dim=-1)
        q = q.view(B, T, self.n_head, self.d_head).transpose(1, 2)
        k = k.view(B, T + M, self.n_head, self.d_head).transpose(1, 2)
        v = v.view(B, T + M, self.n_head, self.d_head).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)
        qpos = torch.arange(T)[:, None] + M
        kpos = torch.arange(T + M)[None, :]
        dist = (qpos - kpos).clamp(min=0, max=self.max_dist)
        scores = scores + self.rel_bias[:, dist]
        scores = scores.masked_fill(kpos > qpos, float("-inf"))
        attn = scores.softmax(dim=-1)
        ctx = (attn @ v).transpose(1, 2).reshape(B, T, D)
        return self.out(ctx)


class Layer(nn.Module):
    def __init__(self, d_model, n_head, d_inner, max_dist):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = RelMultiHeadAttn(d_model, n_head, max_dist)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_inner), nn.GELU(), nn.Linear(d_inner, d_model))

    def forward(self, h, mem):
        mem_n = None if mem is None else self.ln1(mem)
        h = h + self.attn(self.ln1(h), mem_n)
        return h + self.ff(self.ln2(h))


class MemTransformerLM(nn.Module):
    def __init__(self, vocab, d_model=32, n_head=2, d_inner=64, n_layer=2, mem_len=16):
        super().__init__()
        self.mem_len = mem_len
        self.emb = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList(
            [Layer(d_model, n_head, d_inner, max_dist=2 * mem_len) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def _update_mems(self, hids, mems):
        # the new memory of each layer: last mem_len states that entered it
        new_mems = []
        for h, m in zip(hids, mems):
            cat = h if m is None else torch.cat([m, h], dim=1)
            new_mems.append(cat[:, -self.mem_len:].detach())
        return new_mems

    def forward(self, x, mems=None):
        if mems is None:
            mems = [None] * len(self.layers)
        h = self.emb(x)
        hids = []
        for layer, mem in zip(self.layers, mems):
            hids.append(h)
            h = layer(h, mem)
        logits = self.head(self.ln_f(h))
        return logits, self._update_mems(hids, mems)


@torch.no_grad()
def evaluate(model, data, tgt_len):
    model.eval()
    mems, total, count = None, 0.0, 0
    for i in range(0, data.size(1) - 1, tgt_len):
        x = data[:, i:i + tgt_len]
        y = data[:, i + 1:i + 1 + tgt_len]
        x = x[:, : y.size(1)]
        logits, mems = model(x, mems)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
        count += y.numel()
    model.train()
    return total / count


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=12)
    p.add_argument("--train-tokens", type=int, default=4096)
    p.add_argument("--valid-tokens", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--tgt-len", type=int, default=16)
    p.add_argument("--mem-len", type=int, default=16)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--clip", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    table = make_table(args.vocab, gen)
    train = batchify(make_stream(args.train_tokens, table, gen), args.batch_size)
    valid = batchify(make_stream(args.valid_tokens, table, gen), args.batch_size)

    model = MemTransformerLM(args.vocab, mem_len=args.mem_len)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        mems, total, steps = None, 0.0, 0
        for i in range(0, train.size(1) - 1, args.tgt_len):
            x = train[:, i:i + args.tgt_len]
            y = train[:, i + 1:i + 1 + args.tgt_len]
            x = x[:, : y.size(1)]
            logits, mems = model(x, mems)
            loss = F.cross_entropy(logits.reshape(-1, args.vocab), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
            total += loss.item()
            steps += 1
        val_loss = evaluate(model, valid, args.tgt_len)
        print(f"epoch {epoch} train_loss {total / steps:.6f} val_loss {val_loss:.6f} "
              f"val_ppl {math.exp(val_loss):.6f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
