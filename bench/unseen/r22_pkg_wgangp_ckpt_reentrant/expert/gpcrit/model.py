import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class ResBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, h):
        return h + self.fc2(torch.tanh(self.fc1(h)))


class Critic(nn.Module):
    def __init__(self, hidden, n_blocks, grad_checkpointing=False):
        super().__init__()
        self.stem = nn.Linear(2, hidden)
        self.blocks = nn.ModuleList(ResBlock(hidden) for _ in range(n_blocks))
        self.head = nn.Linear(hidden, 1)
        self.grad_checkpointing = grad_checkpointing

    def forward(self, x):
        h = torch.tanh(self.stem(x))
        for blk in self.blocks:
            if self.grad_checkpointing and self.training:
                h = checkpoint(blk, h, use_reentrant=False)
            else:
                h = blk(h)
        return self.head(h)


class Generator(nn.Module):
    def __init__(self, z_dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, z):
        return self.net(z)
