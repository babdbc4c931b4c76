import torch
import torch.nn as nn

from .ops import swish


class GatedMLPBlock(nn.Module):
    """Pre-norm residual block: out = x + W_out( swish(W_in x') * sigmoid(W_gate W_in x') )."""

    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc_in = nn.Linear(width, 2 * width)
        self.gate = nn.Linear(2 * width, 2 * width)
        self.fc_out = nn.Linear(2 * width, width)

    def forward(self, x):
        h = self.fc_in(self.norm(x))
        g = torch.sigmoid(self.gate(h))
        h = swish(h)
        return x + self.fc_out(h * g)
