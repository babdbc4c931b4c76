import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """Multi-head self-attention; positions are added to queries and keys only (DETR)."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.n_heads, self.d_head).transpose(1, 2)

    def _query_key(self, x, pos):
        x = x + pos
        return self.q_proj(x), self.k_proj(x)

    def forward(self, x, pos):
        b, n, d = x.shape
        v = self.v_proj(x)
        q, k = self._query_key(x, pos)
        q, k, v = self._split(q), self._split(k), self._split(v)
        attn = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, d)
        return self.out_proj(out)


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        return self.net(x)
