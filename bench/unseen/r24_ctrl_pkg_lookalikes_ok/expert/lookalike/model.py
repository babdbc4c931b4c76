import torch
import torch.nn as nn

from .layers import DispAct, EntityTable, MeanAct, ResBlock


class HybridNet(nn.Module):
    def __init__(self, n_entities, n_numeric, n_classes, dim, hidden, act_bits):
        super().__init__()
        self.table = EntityTable(n_entities, dim)
        self.stem = nn.Linear(dim + n_numeric, hidden)
        self.blocks = nn.Sequential(*[ResBlock(hidden, b) for b in act_bits])
        self.cls_head = nn.Linear(hidden, n_classes)
        self.mean_head = nn.Sequential(nn.Linear(hidden, 1), MeanAct())
        self.disp_head = nn.Sequential(nn.Linear(hidden, 1), DispAct())
        self.proto_proj = nn.Linear(dim, n_classes)
        self._proto = None                      # cache, invalidated after every update

    def post_parameter_update(self):
        self._proto = None

    def train(self, mode=True):
        if mode and not self.training:
            self._proto = None
        return super().train(mode)

    def prototypes(self):
        if self._proto is None:
            self._proto = self.proto_proj(self.table.emb.weight[:-1]).mean(0)
        return self._proto

    def forward(self, ids, num):
        e = self.table(ids)
        h = self.blocks(self.stem(torch.cat([e, num], dim=1)))
        logits = self.cls_head(h) + self.prototypes()
        return logits, self.mean_head(h).squeeze(1), self.disp_head(h).squeeze(1)
