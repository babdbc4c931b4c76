"""Small ResNet on synthetic bar/blob images with a Trainer class, label smoothing, cutout,
an EMA copy of the weights and a max-norm classifier. Run: python input.py [--epochs 4 ...]"""
import argparse

import torch

from imgtrain.data import make_images, normalize_
from imgtrain.model import SmallResNet
from imgtrain.trainer import Trainer


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--smoothing", type=float, default=0.1)
    p.add_argument("--ema-decay", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    train_x, train_y = make_images(512, 12, seed=1)
    val_x, val_y = make_images(256, 12, seed=2)
    normalize_(train_x)
    normalize_(val_x)
    trainer = Trainer(SmallResNet(), args.lr, args.smoothing, args.ema_decay, args.seed)
    trainer.fit((train_x, train_y), (val_x, val_y), args.epochs, args.batch_size)
    print(f"checksum {sum(q.abs().sum() for q in trainer.model.parameters()).item():.4f} "
          f"ema {sum(q.abs().sum() for q in trainer.ema.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
