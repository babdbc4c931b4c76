import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .functions import scaled_masked_softmax


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, attn_dropout):
        super().__init__()
        self.h, self.dk = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.attn_dropout = attn_dropout

    def forward(self, x, pad_mask):
        b, L, d = x.shape
        q, k, v = self.qkv(x).view(b, L, 3, self.h, self.dk).permute(2, 0, 3, 1, 4).unbind(0)
        scores = (q @ k.transpose(-1, -2)).reshape(b * self.h, L, L)
        # attention-logit z-loss (keeps the raw logits from drifting; ViT-22B-style stabiliser)
        z = torch.logsumexp(scores, dim=-1).pow(2).mean()
        mask = pad_mask[:, None, None, :].expand(b, self.h, L, L).reshape(b * self.h, L, L)
        probs = scaled_masked_softmax(scores, mask, 1.0 / math.sqrt(self.dk))
        F.dropout(probs, self.attn_dropout, self.training, inplace=True)
        ctx = (probs @ v.reshape(b * self.h, L, self.dk)).view(b, self.h, L, self.dk)
        return self.out(ctx.transpose(1, 2).reshape(b, L, d)), z


class Block(nn.Module):
    def __init__(self, d_model, n_heads, attn_dropout):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, n_heads, attn_dropout)
        self.ff = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))

    def forward(self, x, pad_mask):
        a, z = self.attn(self.ln1(x), pad_mask)
        x = x + a
        return x + self.ff(self.ln2(x)), z


class OrderClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(cfg.vocab, cfg.d_model, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(cfg.seq_len, cfg.d_model) * 0.02)
        self.blocks = nn.ModuleList(Block(cfg.d_model, cfg.n_heads, cfg.attn_dropout)
                                    for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, 2)

    def forward(self, tokens):
        pad_mask = tokens.eq(0)
        x = self.emb(tokens) + self.pos[: tokens.size(1)]
        z_total = x.new_zeros(())
        for blk in self.blocks:
            x, z = blk(x, pad_mask)
            z_total = z_total + z
        keep = (~pad_mask).unsqueeze(-1).float()
        pooled = (self.norm(x) * keep).sum(1) / keep.sum(1)
        return self.head(pooled), z_total / len(self.blocks)
