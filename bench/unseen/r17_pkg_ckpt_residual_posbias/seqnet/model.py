import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class ResidualBlock(nn.Module):
    def __init__(self, dim, seq_len, use_ckpt):
        super().__init__()
        self.use_ckpt = use_ckpt
        self.pos_bias = nn.Parameter(0.02 * torch.randn(seq_len, dim))
        self.norm = nn.LayerNorm(dim)
        self.token_mix = nn.Linear(seq_len, seq_len)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def _branch(self, x):
        x += self.pos_bias
        h = self.norm(x)
        h = self.token_mix(h.transpose(1, 2)).transpose(1, 2)
        return self.fc2(F.gelu(self.fc1(h)))

    def forward(self, x):
        if self.use_ckpt and self.training:
            return x + checkpoint(self._branch, x, use_reentrant=False)
        return x + self._branch(x)


class SeqClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.ModuleList(
            [ResidualBlock(cfg.dim, cfg.seq_len, cfg.grad_ckpt) for _ in range(cfg.depth)]
        )
        self.norm = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, 2)

    def forward(self, tokens):
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(dim=1))
