import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from .moe import MoE


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.dh = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class MoEBlock(nn.Module):
    def __init__(self, dim, heads, num_experts, expert_hidden, bias_update_rate):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.moe = MoE(dim, expert_hidden, num_experts, bias_update_rate)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.moe(self.ln2(x))


class MoELM(nn.Module):
    def __init__(self, vocab, seq_len, dim, heads, layers, num_experts, expert_hidden, bias_update_rate,
                 activation_checkpointing=False):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(seq_len, dim) / math.sqrt(dim))
        self.blocks = nn.ModuleList(MoEBlock(dim, heads, num_experts, expert_hidden, bias_update_rate)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.activation_checkpointing = activation_checkpointing

    def forward(self, idx):
        x = self.tok(idx) + self.pos[: idx.size(1)]
        for blk in self.blocks:
            if self.activation_checkpointing and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(self.norm(x))
