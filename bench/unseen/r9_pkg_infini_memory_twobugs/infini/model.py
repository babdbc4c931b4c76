"""A one-layer Infini-attention language model (Munkhdalai et al., 2024), CPU sized.

Each layer keeps a compressive memory (M, z) per batch that is read with linear attention
(Eq. 3) and updated with the keys/values of every processed segment (Eq. 4).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class InfiniAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.dk = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.beta = nn.Parameter(torch.zeros(1, n_heads, 1, 1))   # memory/local gate
        self.memory = {}

    def reset_memory(self):
        self.memory = {}

    def _retrieve(self, sq):
        if not self.memory:
            return torch.zeros_like(sq)
        M, z = self.memory["M"], self.memory["z"]
        return (sq @ M) / (sq @ z.unsqueeze(-1) + 1e-6)

    def _update(self, sk, v):
        if not self.memory:
            self.memory = {"M": sk.transpose(-2, -1) @ v, "z": sk.sum(dim=-2)}
        else:
            self.memory["M"] += sk.transpose(-2, -1) @ v
            self.memory["z"] += sk.sum(dim=-2)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, self.dk).permute(2, 0, 3, 1, 4)
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.dk)
        local = scores.masked_fill(causal, float("-inf")).softmax(-1) @ v
        sq, sk = F.elu(q) + 1, F.elu(k) + 1
        mem = self._retrieve(sq)
        self._update(sk, v)
        g = torch.sigmoid(self.beta)
        y = g * mem + (1 - g) * local
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


class InfiniLM(nn.Module):
    def __init__(self, vocab, d_model=32, n_heads=4, seg_len=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seg_len, d_model)
        self.attn = InfiniAttention(d_model, n_heads)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.head = nn.Linear(d_model, vocab)

    def reset_memory(self):
        self.attn.reset_memory()

    def forward(self, seg):
        x = self.tok(seg) + self.pos(torch.arange(seg.size(1)))
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return self.head(x)
