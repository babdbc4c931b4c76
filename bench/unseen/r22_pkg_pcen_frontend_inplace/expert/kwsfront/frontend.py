import torch
import torch.nn as nn
import torch.nn.functional as F

from .smoothing import ema_smoother


class LearnableFilterbank(nn.Module):
    def __init__(self, n_filters, kernel, stride):
        super().__init__()
        self.conv = nn.Conv1d(1, n_filters, kernel, stride=stride, bias=False)
        self.pool = nn.AvgPool1d(2)

    def forward(self, wav):
        return self.pool(self.conv(wav.unsqueeze(1)).pow(2))


class PCEN(nn.Module):
    """Trainable per-channel energy normalisation (Wang et al. 2017; LEAF)."""

    def __init__(self, n_channels, alpha, delta, root, smooth, eps):
        super().__init__()
        self.alpha = nn.Parameter(torch.full((n_channels, 1), alpha))
        self.delta = nn.Parameter(torch.full((n_channels, 1), delta))
        self.root = nn.Parameter(torch.full((n_channels, 1), root))
        self.smooth = nn.Parameter(torch.full((n_channels, 1), smooth))
        self.eps = eps

    def forward(self, E):
        s = self.smooth.clamp(0.0, 1.0)
        alpha = self.alpha.clamp(max=1.0)
        r = 1.0 / self.root.clamp(min=1.0)
        M = ema_smoother(E, s)
        E = E / (self.eps + M).pow(alpha)
        return (E + self.delta).pow(r) - self.delta.pow(r)


class Frontend(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fb = LearnableFilterbank(cfg["n_filters"], cfg["kernel"], cfg["stride"])
        self.pcen = PCEN(cfg["n_filters"], **cfg["pcen"])

    def forward(self, wav):
        return self.pcen(self.fb(wav))
