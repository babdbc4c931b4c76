import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        out = torch.tanh(self.fc2(h))
        out = out + x  # residual connection
        return out


class ResNetRegressor(nn.Module):
    def __init__(self, d_in, dim=32, depth=3):
        super().__init__()
        self.stem = nn.Linear(d_in, dim)
        self.blocks = nn.Sequential(*[ResBlock(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x))).squeeze(-1)
