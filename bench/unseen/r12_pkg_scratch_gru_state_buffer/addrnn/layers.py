import torch
import torch.nn as nn

from .cells import GRUCell


class ScratchGRU(nn.Module):
    """Unrolls the cell over time; returns all hidden states (B, T, H)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = GRUCell(input_size, hidden_size)
        self.hidden_size = hidden_size

    def forward(self, x, h0=None):
        B, T, _ = x.shape
        states = x.new_zeros(B, T, self.hidden_size)      # preallocated output buffer
        if h0 is None:
            h0 = x.new_zeros(B, self.hidden_size)
        for t in range(T):
            h_prev = states[:, t - 1] if t > 0 else h0
            states[:, t] = self.cell(x[:, t], h_prev)
        return states


class AddingModel(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.rnn = ScratchGRU(input_size, hidden_size)
        self.head = nn.Linear(hidden_size, 1)

    def forward(self, x):
        states = self.rnn(x)
        return self.head(states[:, -1])
