import torch
import torch.nn as nn
import torch.nn.functional as F


class Mish(nn.Module):
    """Mish: x * tanh(softplus(x)) (Misra, 2019). In-place to save activation memory."""

    def forward(self, x):
        return x.mul_(torch.tanh(F.softplus(x)))
