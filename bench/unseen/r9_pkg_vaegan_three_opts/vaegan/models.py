import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, x_dim, hidden, z_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(x_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 2 * z_dim))

    def forward(self, x):
        mu, logvar = self.net(x).chunk(2, dim=1)
        return mu, logvar


class Decoder(nn.Module):
    def __init__(self, z_dim, hidden, x_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, x_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    """Returns the real/fake logit and the features of the layer used as similarity metric."""

    def __init__(self, x_dim, hidden):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(x_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, hidden))
        self.head = nn.Sequential(nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        f = self.features(x)
        return self.head(f), f


class VAEGAN(nn.Module):
    def __init__(self, x_dim=16, hidden=64, z_dim=4):
        super().__init__()
        self.z_dim = z_dim
        self.encoder = Encoder(x_dim, hidden, z_dim)
        self.decoder = Decoder(z_dim, hidden, x_dim)
        self.discriminator = Discriminator(x_dim, hidden)

    def forward(self, x):
        mu, logvar = self.encoder(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decoder(z), mu, logvar
