import torch.nn as nn


def mlp(i, h, o):
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, o))


class Generator(nn.Module):
    def __init__(self, latent_dim=4, hidden=32):
        super().__init__()
        self.net = mlp(latent_dim, hidden, 1)

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = mlp(1, hidden, 1)

    def forward(self, x):
        return self.net(x)
