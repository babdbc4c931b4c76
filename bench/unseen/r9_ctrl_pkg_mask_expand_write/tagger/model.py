import torch
import torch.nn as nn

from .data import PAD


def build_attention_mask(tokens, causal):
    """Boolean (B, L, L) mask, True = may NOT attend."""
    b, length = tokens.shape
    key_pad = tokens == PAD
    mask = key_pad[:, None, :].expand(b, length, length)
    if causal:
        mask |= torch.ones(length, length, dtype=torch.bool).triu(1)
    return mask


class Tagger(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model, padding_idx=PAD)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        self.attn = nn.MultiheadAttention(cfg.d_model, cfg.n_heads, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.ff = nn.Sequential(nn.Linear(cfg.d_model, 2 * cfg.d_model), nn.ReLU(),
                                nn.Linear(2 * cfg.d_model, cfg.d_model))
        self.out = nn.Linear(cfg.d_model, cfg.n_tags)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos(torch.arange(tokens.size(1)))
        mask = build_attention_mask(tokens, self.cfg.causal)
        mask = mask.repeat_interleave(self.cfg.n_heads, dim=0)
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a
        x = x + self.ff(self.norm2(x))
        return self.out(x)
