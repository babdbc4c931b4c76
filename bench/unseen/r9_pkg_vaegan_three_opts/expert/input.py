"""Train the VAE-GAN on synthetic 1-D signals: python input.py [--epochs N]"""
import argparse

import torch

from vaegan.data import make_dataset
from vaegan.models import VAEGAN
from vaegan.trainer import VAEGANTrainer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--gamma", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=2)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(args.seed)
    train, val = make_dataset(512, 16, gen), make_dataset(128, 16, gen)
    model = VAEGAN(x_dim=16)
    trainer = VAEGANTrainer(model, lr=args.lr, gamma=args.gamma)
    trainer.fit(train, val, args.epochs, args.batch_size, gen)
    for name in ("encoder", "decoder", "discriminator"):
        norm = torch.sqrt(sum(p.pow(2).sum() for p in getattr(model, name).parameters())).item()
        print(f"{name} norm {norm:.5f}")


if __name__ == "__main__":
    main()
