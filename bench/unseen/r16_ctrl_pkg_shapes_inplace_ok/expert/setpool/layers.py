from functools import partial

import torch
import torch.nn as nn

ACTS = {"relu": partial(nn.ReLU, inplace=True), "silu": partial(nn.SiLU, inplace=True)}


class LinearBase(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x)          # Linear does not save its output


class PostActBlock(LinearBase):
    def __init__(self, d, act):
        super().__init__(d)
        self.act = ACTS[act]()

    def forward(self, x):
        out = super().forward(x)
        out += x                   # legal: nothing saved `out`
        return self.act(out)       # legal: in-place ReLU on an Add output


class GatedBlock(LinearBase):
    def __init__(self, d, act):
        super().__init__(d)
        self.gate = nn.Linear(d, d)

    def forward(self, x):
        out = super().forward(x)
        g = torch.sigmoid(self.gate(x))
        out.mul_(g)                # legal: mul_ saves g and the old `out` is not needed elsewhere
        return out + x


BLOCKS = {"post": PostActBlock, "gated": GatedBlock}
