"""Output activations of the deep count autoencoder (DCA, Eraslan et al. 2019)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MeanAct(nn.Module):
    """Mean of the negative binomial: exp, clipped for numerical safety."""

    def forward(self, x):
        return torch.clamp(torch.exp(x), min=1e-5, max=1e6)


class DispAct(nn.Module):
    """Dispersion theta: softplus, clipped."""

    def forward(self, x):
        return torch.clamp(F.softplus(x), min=1e-4, max=1e4)


class GaussianNoise(nn.Module):
    def __init__(self, sigma):
        super().__init__()
        self.sigma = sigma

    def forward(self, x):
        if self.training and self.sigma > 0:
            return x + self.sigma * torch.randn_like(x)
        return x
