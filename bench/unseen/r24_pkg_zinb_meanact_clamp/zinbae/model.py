import torch
import torch.nn as nn

from .layers import DispAct, GaussianNoise, MeanAct


def mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.BatchNorm1d(b), nn.ReLU()]
    return nn.Sequential(*layers)


class ZINBAutoencoder(nn.Module):
    def __init__(self, n_genes, hidden, input_noise):
        super().__init__()
        self.noise = GaussianNoise(input_noise)
        self.encoder = mlp([n_genes] + hidden)
        self.decoder = mlp(hidden[::-1])
        h = hidden[0]
        self.mean = nn.Sequential(nn.Linear(h, n_genes), MeanAct())
        self.disp = nn.Sequential(nn.Linear(h, n_genes), DispAct())
        self.pi = nn.Sequential(nn.Linear(h, n_genes), nn.Sigmoid())

    def forward(self, x):
        z = self.encoder(self.noise(x))
        h = self.decoder(z)
        return z, self.mean(h), self.disp(h), self.pi(h)
