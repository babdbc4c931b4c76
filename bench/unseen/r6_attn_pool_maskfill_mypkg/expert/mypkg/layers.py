import torch
import torch.nn as nn


class AttentionPooling(nn.Module):
    """Additive attention pooling over time; padded steps get zero weight."""

    def __init__(self, dim, attn_dim=32):
        super().__init__()
        self.proj = nn.Linear(dim, attn_dim)
        self.score = nn.Linear(attn_dim, 1, bias=False)

    def forward(self, h, pad_mask):
        scores = self.score(torch.tanh(self.proj(h))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        weights = weights.masked_fill(pad_mask, 0.0)
        return torch.bmm(weights.unsqueeze(1), h).squeeze(1), weights
