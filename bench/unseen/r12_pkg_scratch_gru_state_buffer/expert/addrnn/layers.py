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
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        for t in range(T):
            h = self.cell(x[:, t], h)       # carry the state in a variable ...
            states[:, t] = h                # ... and only write into the buffer
        return states


class AddingModel(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.rnn = ScratchGRU(input_size, hidden_size)
        self.head = nn.Linear(hidden_size, 1)

    def forward(self, x):
        states = self.rnn(x)
        return self.head(states[:, -1])
