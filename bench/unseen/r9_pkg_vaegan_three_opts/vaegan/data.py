import torch


def make_dataset(n, x_dim, gen):
    """Smooth 1-D 'signals' with random phase/frequency, scaled to [-1, 1]."""
    t = torch.linspace(0, 1, x_dim)
    freq = torch.randint(1, 4, (n, 1), generator=gen).float()
    phase = torch.rand(n, 1, generator=gen) * 6.283
    amp = 0.5 + 0.4 * torch.rand(n, 1, generator=gen)
    return amp * torch.sin(6.283 * freq * t + phase) + 0.03 * torch.randn(n, x_dim, generator=gen)
