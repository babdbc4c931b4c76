"""Tiny Gemma-2 style decoder LM trained on a synthetic Markov-chain corpus.

Gemma details reproduced here:
  * RMSNorm stores (scale - 1) and multiplies by (1 + weight)
  * embeddings scaled by sqrt(d_model), tied LM head
  * attention-logit soft-capping and final-logit soft-capping (cap * tanh(x / cap))
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GemmaRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        out = self._norm(x.float())
        # Gemma keeps the weight in the "offset" form and multiplies by (1 + w)
        scale = 1.0 + self.weight.float()
        return (out * scale).type_as(x)


class Attention(nn.Module):
    def __init__(self, d, n_heads, softcap):
        super().__init__()
        self.h = n_heads
        self.dh = d // n_heads
        self.softcap = softcap
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh)
        scores = torch.tanh(scores / self.softcap) * self.softcap
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores.masked_fill_(causal, float("-inf"))
        att = scores.softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, D)
        return self.o(y)


class Block(nn.Module):
    def __init__(self, d, n_heads, softcap):
        super().__init__()
        self.ln1 = GemmaRMSNorm(d)
        self.attn = Attention(d, n_heads, softcap)
        self.ln2 = GemmaRMSNorm(d)
        self.gate = nn.Linear(d, 2 * d, bias=False)
        self.up = nn.Linear(d, 2 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        h = self.ln2(x)
        x = x + self.down(F.gelu(self.gate(h), approximate="tanh") * self.up(h))
        return x


class TinyGemma(nn.Module):
    def __init__(self, vocab, d, n_layers, n_heads, attn_softcap, final_softcap):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, n_heads, attn_softcap) for _ in range(n_layers)])
        self.norm = GemmaRMSNorm(d)
        self.final_softcap = final_softcap
        self.normalizer = math.sqrt(d)

    def forward(self, idx):
        x = self.embed(idx) * self.normalizer
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        logits = x @ self.embed.weight.t()
        if self.final_softcap is not None:
            logits = torch.tanh(logits / self.final_softcap) * self.final_softcap
        return logits


def make_corpus(vocab, n_seq, seq_len, seed):
    g = torch.Generator().manual_seed(seed)
    trans = torch.softmax(torch.randn(vocab, vocab, generator=g) * 2.5, dim=-1)
    seqs = torch.empty(n_seq, seq_len, dtype=torch.long)
    seqs[:, 0] = torch.randint(0, vocab, (n_seq,), generator=g)
    for t in range(1, seq_len):
        seqs[:, t] = torch.multinomial(trans[seqs[:, t - 1]], 1, generator=g).squeeze(1)
    return seqs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=24)
    p.add_argument("--d-model", type=int, default=32)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=16)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--attn-softcap", type=float, default=50.0)
    p.add_argument("--final-softcap", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    data = make_corpus(args.vocab, 256, args.seq_len + 1, args.seed + 1)
    model = TinyGemma(args.vocab, args.d_model, args.layers, args.heads,
                      args.attn_softcap, args.final_softcap)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    g = torch.Generator().manual_seed(args.seed + 2)
    losses = []
    for step in range(args.steps):
        idx = torch.randint(0, data.shape[0], (args.batch,), generator=g)
        batch = data[idx]
        inp, tgt = batch[:, :-1], batch[:, 1:]
        logits = model(inp)
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), tgt.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())

    with torch.no_grad():
        batch = data[:64]
        val = F.cross_entropy(model(batch[:, :-1]).reshape(-1, args.vocab),
                              batch[:, 1:].reshape(-1)).item()
    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    norm_w = sum(m.weight.double().sum().item() for m in model.modules()
                 if isinstance(m, GemmaRMSNorm))
    print(f"first_loss {losses[0]:.6f}")
    print(f"final_loss {losses[-1]:.6f}")
    print(f"val_loss {val:.6f}")
    print(f"rmsnorm_weight_sum {norm_w:.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
