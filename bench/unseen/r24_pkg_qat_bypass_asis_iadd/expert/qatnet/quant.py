"""PACT activation quantisation (Choi et al. 2018) with a straight-through estimator."""
import torch
import torch.nn as nn


class PACTQuant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha, bits):
        ctx.bypass = bits >= 32
        if ctx.bypass:
            # full-precision layer: nothing to quantise
            return x.clone()
        ctx.save_for_backward(x, alpha)
        y = torch.minimum(x.clamp(min=0.0), alpha)
        scale = (2 ** bits - 1) / alpha
        return torch.round(y * scale) / scale

    @staticmethod
    def backward(ctx, grad_out):
        if ctx.bypass:
            return grad_out, None, None
        x, alpha = ctx.saved_tensors
        inside = (x >= 0) & (x <= alpha)
        grad_alpha = (grad_out * (x > alpha)).sum().reshape(alpha.shape)
        return grad_out * inside, grad_alpha, None


class QuantAct(nn.Module):
    def __init__(self, bits, alpha_init):
        super().__init__()
        self.bits = bits
        self.alpha = nn.Parameter(torch.tensor([alpha_init]))

    def forward(self, x):
        return PACTQuant.apply(x, self.alpha, self.bits)

    def extra_repr(self):
        return f"bits={self.bits}"
