import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, in_dim, hidden, n_labels):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.head = nn.Linear(hidden, n_labels)

    def forward(self, x):
        return self.head(self.body(x))
