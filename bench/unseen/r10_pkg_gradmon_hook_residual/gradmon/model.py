import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU(),
                                  nn.Linear(width, width))

    def forward(self, x):
        out = self.body(x)
        out += x                      # identity shortcut, as in torchvision's BasicBlock
        return torch.relu(out)


class ResMLP(nn.Module):
    def __init__(self, dim, width, blocks, classes):
        super().__init__()
        self.stem = nn.Linear(dim, width)
        self.blocks = nn.ModuleList(ResBlock(width) for _ in range(blocks))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        h = self.stem(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)
