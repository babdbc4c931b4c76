import torch
import torch.nn as nn


class Normalize(nn.Module):
    """Per-channel normalization as the first layer, so attacks work in [0, 1] pixel space."""

    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, -1, 1, 1))

    def forward(self, x):
        return (x - self.mean) / self.std
