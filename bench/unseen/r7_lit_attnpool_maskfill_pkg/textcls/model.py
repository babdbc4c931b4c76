import torch
import torch.nn as nn


class AttentionPooling(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, 1))

    def forward(self, h, mask):
        # h: (B, T, D), mask: (B, T) True for real tokens
        scores = self.score(h).squeeze(-1)
        attn = torch.softmax(scores, dim=-1)
        attn.masked_fill_(~mask, 0.0)                  # padded positions get no weight
        attn = attn / attn.sum(dim=-1, keepdim=True)   # renormalise over real tokens
        return torch.bmm(attn.unsqueeze(1), h).squeeze(1), attn


class AttnPoolClassifier(nn.Module):
    def __init__(self, vocab, dim, n_classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.pool = AttentionPooling(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x, lengths):
        mask = torch.arange(x.size(1), device=x.device)[None, :] < lengths[:, None]
        h = self.encoder(self.embed(x))
        pooled, _ = self.pool(h, mask)
        return self.head(pooled)
