import torch
import torch.nn.functional as F


def kl_divergence(mu, logvar):
    return (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp())).sum(1).mean()


def gan_losses(d_real, d_recon, d_prior):
    ones, zeros = torch.ones_like(d_real), torch.zeros_like(d_real)
    bce = F.binary_cross_entropy_with_logits
    return bce(d_real, ones) + bce(d_recon, zeros) + bce(d_prior, zeros)


def feature_reconstruction(f_recon, f_real):
    # "learned similarity": reconstruction error measured in discriminator feature space
    return 0.5 * (f_recon - f_real.detach()).pow(2).sum(1).mean()
