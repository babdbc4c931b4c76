import torch
import torch.nn as nn


class GRU4Rec(nn.Module):
    """GRU session encoder whose output scores are tied to the item embedding table."""

    def __init__(self, n_items, emb_dim, hidden, max_norm=None):
        super().__init__()
        self.item_emb = nn.Embedding(n_items, emb_dim, max_norm=max_norm)
        self.gru = nn.GRU(emb_dim, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, emb_dim)

    def forward(self, seq):
        x = self.item_emb(seq)
        out, _ = self.gru(x)
        return self.proj(out[:, -1])

    def score_all(self, h):
        return h @ self.item_emb.weight.clone().t()

    def score_items(self, h, items):
        return (h.unsqueeze(1) * self.item_emb(items)).sum(-1)
