"""Activation range observers."""
import torch
import torch.nn as nn


class EMAMinMaxObserver(nn.Module):
    """Tracks an exponential moving average of the activation range.

    The quantization parameters (scale, zero point) of an activation are
    derived from the tracked range, as in moving-average min/max observers.
    """

    def __init__(self, bits=8, momentum=0.9):
        super().__init__()
        self.bits = bits
        self.momentum = momentum
        self.register_buffer("min_val", torch.tensor(0.0))
        self.register_buffer("max_val", torch.tensor(0.0))
        self.register_buffer("initialized", torch.tensor(False))

    def forward(self, x):
        mn, mx = x.min(), x.max()
        if not bool(self.initialized):
            self.min_val, self.max_val = mn, mx
            self.initialized.fill_(True)
        else:
            m = self.momentum
            self.min_val = m * self.min_val + (1 - m) * mn
            self.max_val = m * self.max_val + (1 - m) * mx
        return x

    def qparams(self):
        qmax = 2 ** self.bits - 1
        lo = torch.clamp(self.min_val, max=0.0)
        hi = torch.clamp(self.max_val, min=0.0)
        scale = torch.clamp((hi - lo) / qmax, min=1e-8)
        zero_point = torch.round(-lo / scale).detach()
        return scale, zero_point, 0, qmax
