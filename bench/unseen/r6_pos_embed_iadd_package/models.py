import torch
import torch.nn as nn

from layers import FeedForward, SelfAttention


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.attn = SelfAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, src, pos):
        src = self.norm1(src + self.attn(src, pos))
        src = self.norm2(src + self.ffn(src))
        return src


class SequenceClassifier(nn.Module):
    def __init__(self, in_dim, d_model, n_heads, d_ff, n_layers, max_len, n_classes):
        super().__init__()
        self.input_proj = nn.Linear(in_dim, d_model)
        self.pos = nn.Parameter(torch.randn(1, max_len, d_model) * 0.1)
        self.layers = nn.ModuleList([EncoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, x):
        h = self.input_proj(x)
        pos = self.pos[:, :x.size(1)]
        for layer in self.layers:
            h = layer(h, pos)
        return self.head(h.mean(dim=1))
