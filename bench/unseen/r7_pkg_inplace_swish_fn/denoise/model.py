import torch.nn as nn

from .blocks import GatedMLPBlock


class Denoiser(nn.Module):
    def __init__(self, signal_len, width, n_blocks):
        super().__init__()
        self.inp = nn.Linear(signal_len, width)
        self.blocks = nn.Sequential(*[GatedMLPBlock(width) for _ in range(n_blocks)])
        self.out = nn.Linear(width, signal_len)

    def forward(self, x):
        return x + self.out(self.blocks(self.inp(x)))   # predicts a correction
