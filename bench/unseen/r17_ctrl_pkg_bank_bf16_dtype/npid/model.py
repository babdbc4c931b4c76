import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, d_in, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(inplace=True), nn.Linear(64, dim))

    def forward(self, x):
        return F.normalize(self.net(x), dim=1)


class MemoryBank(nn.Module):
    """One L2-normalised feature per training sample, updated with momentum."""

    def __init__(self, n, dim, momentum):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("bank", F.normalize(torch.randn(n, dim), dim=1))

    def logits(self, feats, temperature):
        return feats @ self.bank.T / temperature

    @torch.no_grad()
    def update(self, idx, feats):
        mixed = feats.detach().mul(1 - self.momentum).add_(self.bank[idx], alpha=self.momentum)
        mixed.div_(mixed.norm(dim=1, keepdim=True))
        self.bank.index_copy_(0, idx, mixed)
