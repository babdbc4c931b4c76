import torch
import torch.nn as nn


class FastSigmoidSpike(torch.autograd.Function):
    """Heaviside spike in the forward pass, fast-sigmoid surrogate in the backward pass."""

    @staticmethod
    def forward(ctx, mem, threshold, slope):
        ctx.save_for_backward(mem)
        ctx.threshold = threshold
        ctx.slope = slope
        return (mem > threshold).to(mem.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        (mem,) = ctx.saved_tensors
        surrogate = 1.0 / (ctx.slope * (mem - ctx.threshold).abs() + 1.0) ** 2
        return grad_out * surrogate, None, None


class LIF(nn.Module):
    """Stateful leaky integrate-and-fire neuron with reset by subtraction.

    The membrane potential is kept on the module between calls (one call per
    simulation time step) and cleared by ``reset_state``.
    """

    def __init__(self, beta, threshold, slope):
        super().__init__()
        self.beta = beta
        self.threshold = threshold
        self.slope = slope
        self.mem = None

    def reset_state(self):
        self.mem = None

    def forward(self, current):
        if self.mem is None:
            self.mem = torch.zeros_like(current)
        mem = self.beta * self.mem + current
        spk = FastSigmoidSpike.apply(mem, self.threshold, self.slope)
        # reset by subtraction: a neuron that fired loses one threshold of potential
        mem -= spk * self.threshold
        self.mem = mem
        return spk, mem
