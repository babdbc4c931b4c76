import torch


def decoy_dataset(n, d, decoy_dims, gen):
    """Binary task; the decoy features encode the label almost perfectly in the training set."""
    y = torch.randint(0, 2, (n,), generator=gen)
    x = 0.5 * torch.randn(n, d, generator=gen)
    x[:, 2:6] += (2 * y.float() - 1).unsqueeze(1) * 0.4
    for j in decoy_dims:
        x[:, j] = (2 * y.float() - 1) * 1.5 + 0.05 * torch.randn(n, generator=gen)
    mask = torch.zeros(n, d)
    mask[:, decoy_dims] = 1.0
    return x, y, mask
