import torch
import torch.nn as nn

SLOPE = 5.0


class SpikeFn(torch.autograd.Function):
    """Heaviside spike with a fast-sigmoid surrogate gradient (SuperSpike)."""

    @staticmethod
    def forward(ctx, mem, threshold):
        ctx.save_for_backward(mem)
        ctx.threshold = threshold
        return (mem > threshold).float()

    @staticmethod
    def backward(ctx, grad_out):
        (mem,) = ctx.saved_tensors
        sg = 1.0 / (1.0 + SLOPE * (mem - ctx.threshold).abs()) ** 2
        return grad_out * sg, None


class Leaky(nn.Module):
    """Leaky integrate-and-fire neuron; keeps its membrane potential between calls."""

    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold
        self.mem = None

    def reset(self):
        self.mem = None

    def forward(self, current):
        if self.mem is None:
            self.mem = torch.zeros_like(current)
        self.mem = self.beta * self.mem + current
        spk = SpikeFn.apply(self.mem, self.threshold)
        self.mem -= spk * self.threshold  # reset by subtraction
        return spk


class SNN(nn.Module):
    def __init__(self, n_in, n_hidden, n_out, beta=0.9):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.lif1 = Leaky(beta)
        self.fc2 = nn.Linear(n_hidden, n_out)
        self.lif2 = Leaky(beta)

    def reset(self):
        self.lif1.reset()
        self.lif2.reset()

    def forward(self, x_seq):
        # x_seq: (T, B, n_in) -> spike counts of the output layer (B, n_out)
        counts = 0
        for x in x_seq:
            spk1 = self.lif1(self.fc1(x))
            spk2 = self.lif2(self.fc2(spk1))
            counts = counts + spk2
        return counts
