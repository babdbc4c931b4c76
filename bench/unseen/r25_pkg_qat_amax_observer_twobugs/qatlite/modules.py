"""Quantized building blocks."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from .fake_quant import fake_quant_affine, fake_quant_weight
from .observer import EMAMinMaxObserver


class QuantLinear(nn.Linear):
    """Linear layer with fake-quantized weights (per-channel, symmetric)."""

    def __init__(self, in_features, out_features, weight_bits=4):
        super().__init__(in_features, out_features)
        self.weight_bits = weight_bits

    def forward(self, x):
        return F.linear(x, fake_quant_weight(self.weight, self.weight_bits), self.bias)


class QuantAct(nn.Module):
    """Observe the activation range and fake-quantize the activation (unsigned, asymmetric)."""

    def __init__(self, bits=8, momentum=0.9):
        super().__init__()
        self.observer = EMAMinMaxObserver(bits, momentum)

    def forward(self, x):
        if self.training:
            self.observer(x)
        scale, zp, qmin, qmax = self.observer.qparams()
        return fake_quant_affine(x, scale, zp, qmin, qmax)


class QuantMLP(nn.Module):
    def __init__(self, n_in, hidden, n_out, weight_bits=4, act_bits=8, momentum=0.9):
        super().__init__()
        self.fc1 = QuantLinear(n_in, hidden, weight_bits)
        self.act1 = QuantAct(act_bits, momentum)
        self.fc2 = QuantLinear(hidden, hidden, weight_bits)
        self.act2 = QuantAct(act_bits, momentum)
        self.head = QuantLinear(hidden, n_out, weight_bits)

    def forward(self, x):
        x = self.act1(F.relu(self.fc1(x)))
        x = self.act2(F.relu(self.fc2(x)))
        return self.head(x)
