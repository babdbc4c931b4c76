import torch
import torch.nn as nn

from .data import PAD


class Tagger(nn.Module):
    def __init__(self, vocab=60, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.out = nn.Linear(2 * dim, 2)

    def forward(self, tokens):
        pad = tokens.eq(PAD)
        h = self.embed(tokens)
        scores = self.q(h) @ self.k(h).transpose(1, 2) / h.shape[-1] ** 0.5
        scores.masked_fill_(pad[:, None, :], float("-inf"))
        ctx = torch.softmax(scores, dim=-1) @ h
        return self.out(torch.cat([h, ctx], dim=-1))
