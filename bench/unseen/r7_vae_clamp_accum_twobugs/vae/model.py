import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, in_dim=64, hidden=64, latent=6, eps=1e-3):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, in_dim))
        self.eps = eps

    def decode(self, z):
        probs = torch.sigmoid(self.dec(z))
        probs.clamp_(self.eps, 1 - self.eps)     # keep BCE away from log(0)
        return probs

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.decode(z), mu, logvar
