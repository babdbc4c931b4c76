"""Squeeze-and-excitation 1D CNN on synthetic two-channel signals.
Run: python input.py"""
import torch

from lit_module import HParams, LitSEClassifier
from loops import train


def make_data(n, hp, gen):
    t = torch.linspace(0, 1, 96)
    y = torch.randint(0, hp.n_classes, (n,), generator=gen)
    burst_center = 0.2 + 0.6 * torch.rand(n, 1, generator=gen)
    envelope = torch.exp(-((t[None, :] - burst_center) ** 2) / 0.02)
    freq = 4.0 + 4.0 * y.float()[:, None]
    carrier = torch.sin(6.28 * freq * t + 6.28 * torch.rand(n, 1, generator=gen))
    x = torch.stack([envelope * carrier, 0.5 * envelope], dim=1)
    return x + 0.3 * torch.randn(n, hp.in_channels, 96, generator=gen), y


if __name__ == "__main__":
    torch.manual_seed(0)
    hp = HParams()
    gen = torch.Generator().manual_seed(1)
    x, y = make_data(480, hp, gen)
    x_val, y_val = make_data(192, hp, gen)
    batches = [(x[i:i + hp.batch_size], y[i:i + hp.batch_size]) for i in range(0, len(x), hp.batch_size)]
    model = LitSEClassifier(hp)
    train(model, batches, (x_val, y_val), hp.epochs)
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")
