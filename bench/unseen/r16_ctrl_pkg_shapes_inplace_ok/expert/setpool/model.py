import torch
import torch.nn as nn

from .layers import BLOCKS


class MaskedPoolMixin:
    def pool(self, h, pad):
        scores = self.score(h).squeeze(-1)         # Linear output, not saved
        scores.masked_fill_(pad, float("-inf"))    # legal
        w = scores.softmax(dim=-1)
        return (w.unsqueeze(-1) * h).sum(1)


class SetClassifier(MaskedPoolMixin, nn.Module):
    def __init__(self, feat, classes, mcfg):
        super().__init__()
        d = mcfg["width"]
        self.inp = nn.Linear(feat, d)
        self.blocks = nn.ModuleDict(
            {f"b{i}": BLOCKS[kind](d, mcfg["act"]) for i, kind in enumerate(mcfg["blocks"])}
        )
        self.score = nn.Linear(d, 1)
        self.head = nn.Linear(d, classes)

    def forward(self, x, pad):
        h = self.inp(x)
        for blk in self.blocks.values():
            h = blk(h)
        return self.head(self.pool(h, pad))
