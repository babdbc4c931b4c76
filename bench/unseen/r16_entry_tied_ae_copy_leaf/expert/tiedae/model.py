import torch
import torch.nn as nn

from .layers import TiedLinear, make_encoder_layer
from .mixins import TiedWeightsMixin


class TiedAutoencoder(TiedWeightsMixin, nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.encoder = nn.ModuleList(
            make_encoder_layer(a, b) for a, b in zip(dims[:-1], dims[1:])
        )
        self.decoder = nn.ModuleList(TiedLinear(layer) for layer in reversed(self.encoder))

    def encode(self, x):
        for layer in self.encoder:
            x = torch.tanh(layer(x))
        return x

    def decode(self, z):
        for i, layer in enumerate(self.decoder):
            z = layer(z)
            if i < len(self.decoder) - 1:
                z = torch.tanh(z)
        return z

    def forward(self, x):
        self.tie_weights()
        return self.decode(self.encode(x))
