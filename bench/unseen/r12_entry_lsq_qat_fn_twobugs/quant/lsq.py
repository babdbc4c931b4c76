"""Learned Step Size Quantization (Esser et al., ICLR 2020).

Weights: per-output-channel step sizes through a custom autograd.Function (saves memory
compared with the detach trick); activations: per-tensor step with grad_scale/round_pass.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function


class LSQQuantizer(Function):
    """w_q = round(clamp(w / s_c, Qn, Qp)) * s_c with one learned step s_c per output channel."""

    @staticmethod
    def forward(ctx, weight, alpha, g, Qn, Qp):
        assert (alpha > 0).all(), "step sizes must be positive"
        ctx.save_for_backward(weight, alpha, g, Qn, Qp)
        a = alpha.view(-1, *([1] * (weight.dim() - 1)))
        q_w = (weight / a).round().clamp(Qn, Qp)
        return q_w * a

    @staticmethod
    def backward(ctx, grad_output):
        weight, alpha, g, Qn, Qp = ctx.saved_tensors
        a = alpha.view(-1, *([1] * (weight.dim() - 1)))
        q_w = weight / a
        small = (q_w < Qn).float()
        big = (q_w > Qp).float()
        middle = 1.0 - small - big
        # d w_q / d s: Qn or Qp outside the range, round(v) - v inside it; scaled by g
        grad_alpha = (small * Qn + big * Qp + middle * (q_w.round() - q_w)) * grad_output * g
        grad_weight = middle * grad_output          # straight-through inside the range
        return grad_weight, grad_alpha, None, None, None


def grad_scale(x, scale):
    return (x - x * scale).detach() + x * scale


def round_pass(x):
    return (x.round() - x).detach() + x


class QuantLinear(nn.Linear):
    def __init__(self, in_features, out_features, bits=4):
        super().__init__(in_features, out_features)
        self.Qn, self.Qp = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        self.alpha = nn.Parameter(torch.ones(out_features))
        self.register_buffer("initialized", torch.zeros((), dtype=torch.bool))

    def forward(self, x):
        if not self.initialized:
            with torch.no_grad():
                self.alpha.copy_(2 * self.weight.abs().mean(dim=1) / math.sqrt(self.Qp))
                self.initialized.fill_(True)
        g = 1.0 / math.sqrt(self.weight.size(1) * self.Qp)
        w_q = LSQQuantizer.apply(self.weight, self.alpha, g, self.Qn, self.Qp)
        return F.linear(x, w_q, self.bias)


class QuantAct(nn.Module):
    """Unsigned per-tensor activation quantizer (after ReLU)."""

    def __init__(self, bits=4):
        super().__init__()
        self.Qn, self.Qp = 0, 2 ** bits - 1
        self.alpha = nn.Parameter(torch.ones(()))
        self.register_buffer("initialized", torch.zeros((), dtype=torch.bool))

    def forward(self, x):
        if not self.initialized:
            with torch.no_grad():
                self.alpha.copy_(2 * x.abs().mean() / math.sqrt(self.Qp))
                self.initialized.fill_(True)
        s = grad_scale(self.alpha, 1.0 / math.sqrt(x.numel() * self.Qp))
        return round_pass((x / s).clamp(self.Qn, self.Qp)) * s
