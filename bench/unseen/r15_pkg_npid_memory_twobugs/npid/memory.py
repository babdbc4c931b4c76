"""Non-parametric instance discrimination (Wu et al., 2018): one memory slot per training
instance, updated with momentum from the current feature of that instance."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MemoryBank(nn.Module):
    def __init__(self, n_data, dim, temperature=0.1, momentum=0.5):
        super().__init__()
        self.temperature = temperature
        self.momentum = momentum
        stdv = 1.0 / math.sqrt(dim / 3)
        self.register_buffer("memory", torch.rand(n_data, dim).mul_(2 * stdv).add_(-stdv))

    def forward(self, x, idx):
        # similarities of every feature in the batch to every stored instance
        out = torch.mm(x, self.memory.t()) / self.temperature

        # momentum update of the slots of this batch
        pos = self.memory.index_select(0, idx)
        pos = pos * self.momentum + x * (1.0 - self.momentum)
        pos = F.normalize(pos, dim=1)
        self.memory.index_copy_(0, idx, pos)
        return out
