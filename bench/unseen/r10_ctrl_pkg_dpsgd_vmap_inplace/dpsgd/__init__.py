"""dpsgd: DP-SGD (per-sample clipping + Gaussian noise) with torch.func per-sample gradients."""
