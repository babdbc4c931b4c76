import torch.nn as nn

from .blocks import BLOCKS
from .layers import make_act, make_linear


class PreActNet(nn.Module):
    def __init__(self, in_dim, classes, mcfg):
        super().__init__()
        self.stem = make_linear(in_dim, mcfg["stem"])
        self.stages = nn.ModuleDict()
        d = mcfg["stem"]
        for st in mcfg["stages"]:
            self.stages[st["name"]] = BLOCKS[st["block"]](d, st["out"], mcfg["act"])
            d = st["out"]
        self.head = nn.Sequential(make_act("gelu"), make_linear(d, classes))

    def forward(self, x):
        h = self.stem(x)
        for name, block in self.stages.items():
            h = block(h)
        return self.head(h)
