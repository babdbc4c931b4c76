"""VAE-GAN (Larsen et al. 2016) with a learned similarity metric, small MLP version."""
