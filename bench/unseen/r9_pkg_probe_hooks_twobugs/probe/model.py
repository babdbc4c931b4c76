import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(hidden, dim)
        self.act2 = nn.Tanh()

    def forward(self, x):
        return x + self.act2(self.fc2(self.act1(self.fc1(x))))


class ProbeMLP(nn.Module):
    def __init__(self, n_features, n_classes, hidden, depth):
        super().__init__()
        self.blocks = nn.ModuleList([Block(n_features, hidden) for _ in range(depth)])
        self.head = nn.Linear(n_features, n_classes)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)
