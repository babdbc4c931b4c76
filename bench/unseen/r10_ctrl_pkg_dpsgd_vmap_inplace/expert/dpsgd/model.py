import torch
import torch.nn as nn


class MultiBranchMLP(nn.Module):
    """Input projection, several parallel branches summed together, linear classifier."""

    def __init__(self, in_dim, hidden, n_blocks, classes=2):
        super().__init__()
        self.inp = nn.Linear(in_dim, hidden)
        self.branches = nn.ModuleList(nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
                                      for _ in range(n_blocks))
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        acc = torch.zeros_like(h)   # batched under vmap, like h
        for branch in self.branches:
            acc += branch(h)
        return self.out(acc + h)
