import torch
import torch.nn as nn


class EmbeddingNet(nn.Module):
    def __init__(self, in_dim, hidden, out_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                                 nn.Linear(hidden, out_dim))

    def forward(self, x):
        z = self.net(x)
        z.div_(z.norm(dim=1, keepdim=True).clamp_min(1e-12))
        return z
