import math

import torch
import torch.nn as nn

from .data import PAD


class MaskedSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.dk = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, pad):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, self.dk).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        attn = torch.softmax(scores, dim=-1)
        attn.masked_fill_(pad[:, None, None, :], 0.0)          # padding keys get no weight
        return self.proj((attn @ v).transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MaskedSelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x, pad):
        x += self.attn(self.norm1(x), pad)      # pre-norm residuals
        x += self.ffn(self.norm2(x))
        return x


class Encoder(nn.Module):
    def __init__(self, vocab, dim, heads, depth, max_len):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(0.02 * torch.randn(max_len, dim))
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, ids):
        pad = ids == PAD
        h = self.embed(ids) + self.pos[: ids.size(1)]
        for block in self.blocks:
            h = block(h, pad)
        return self.norm(h), pad


class OrderClassifier(nn.Module):
    def __init__(self, vocab, dim=32, heads=2, depth=2, max_len=20):
        super().__init__()
        self.encoder = Encoder(vocab, dim, heads, depth, max_len)
        self.head = nn.Linear(dim, 2)

    def forward(self, ids):
        h, pad = self.encoder(ids)
        keep = (~pad).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1))
