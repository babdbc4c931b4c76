from .model import VAE
from .losses import elbo_loss

__all__ = ["VAE", "elbo_loss"]
