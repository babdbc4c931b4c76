"""1-D ResNet on synthetic signals with PyTorch Lightning; many in-place ops, all legal.
Run: python input.py"""
import math
import warnings

import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset

from lit import LitSignal

warnings.filterwarnings("ignore")


def make_signals(n, seed, length=64):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    t = torch.linspace(0, 1, length)
    freq = (2 + 3 * y).float()[:, None]
    x = torch.sin(2 * math.pi * freq * t + 6.28 * torch.rand(n, 1, generator=g))
    x = x + 0.8 * torch.randn(n, length, generator=g)
    return x[:, None, :], y


def main():
    pl.seed_everything(0, verbose=False)
    train = TensorDataset(*make_signals(512, seed=1))
    val = TensorDataset(*make_signals(256, seed=2))
    model = LitSignal()
    trainer = pl.Trainer(
        max_epochs=3,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, DataLoader(train, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0)),
                DataLoader(val, batch_size=256))
    for epoch, (vl, va, ta) in enumerate(model.val_history):
        print(f"epoch {epoch} ema val_loss {vl:.4f} val_acc {va:.4f} train_loss_avg {ta:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.net.parameters()):.4f}")


if __name__ == "__main__":
    main()
