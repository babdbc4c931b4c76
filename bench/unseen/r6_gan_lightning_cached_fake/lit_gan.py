import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, latent_dim, hidden, out_dim, out_scale):
        super().__init__()
        self.out_scale = out_scale
        self.net = nn.Sequential(nn.Linear(latent_dim, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, out_dim))

    def forward(self, z):
        x = torch.tanh(self.net(z))
        x *= self.out_scale
        return x


class Discriminator(nn.Module):
    def __init__(self, in_dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class LitGAN(nn.Module):
    """GAN written like a LightningModule with automatic optimization and two optimizers
    (index 0: discriminator, index 1: generator)."""

    def __init__(self, latent_dim=8, hidden=64, data_dim=2, out_scale=2.5, lr=1e-3):
        super().__init__()
        self.latent_dim = latent_dim
        self.lr = lr
        self.generator = Generator(latent_dim, hidden, data_dim, out_scale)
        self.discriminator = Discriminator(data_dim, hidden)
        self.fake = None

    def forward(self, z):
        return self.generator(z)

    def adversarial_loss(self, logits, target):
        return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))

    def training_step(self, batch, batch_idx, optimizer_idx):
        real = batch
        if optimizer_idx == 0:
            z = torch.randn(real.size(0), self.latent_dim)
            self.fake = self(z)
            d_real = self.discriminator(real)
            d_fake = self.discriminator(self.fake)
            return 0.5 * (self.adversarial_loss(d_real, 1.0) + self.adversarial_loss(d_fake, 0.0))
        return self.adversarial_loss(self.discriminator(self.fake), 1.0)

    def configure_optimizers(self):
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=self.lr, betas=(0.5, 0.999))
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=self.lr, betas=(0.5, 0.999))
        return [opt_d, opt_g]

    @torch.no_grad()
    def mode_distance(self, modes, n=512):
        samples = self(torch.randn(n, self.latent_dim))
        return torch.cdist(samples, modes).min(dim=1).values.mean().item()


def ring_modes(n_modes=8, radius=2.0):
    angles = torch.arange(n_modes) * 2 * math.pi / n_modes
    return radius * torch.stack([torch.cos(angles), torch.sin(angles)], dim=1)
