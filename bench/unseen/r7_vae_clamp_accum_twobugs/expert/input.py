"""Bernoulli VAE on binary bar images with gradient accumulation.
Run: python input.py [--epochs 8 --accum-steps 4 --micro-batch 16]"""
import argparse

import torch

from vae import VAE, elbo_loss
from vae.data import binary_bars


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--micro-batch", type=int, default=16)
    p.add_argument("--accum-steps", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    train_x, test_x = binary_bars(1024, seed=1), binary_bars(256, seed=2)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(train_x))
        acc_loss, logged = 0.0, []
        opt.zero_grad()
        for step, i in enumerate(range(0, len(train_x), args.micro_batch)):
            x = train_x[perm[i:i + args.micro_batch]]
            probs, mu, logvar = model(x)
            loss, _, _ = elbo_loss(probs, x, mu, logvar)
            acc_loss = acc_loss + loss / args.accum_steps
            if (step + 1) % args.accum_steps == 0:
                acc_loss.backward()
                opt.step()
                opt.zero_grad()
                logged.append(acc_loss.item())
                acc_loss = 0.0
        model.eval()
        with torch.no_grad():
            torch.manual_seed(100 + epoch)
            probs, mu, logvar = model(test_x)
            test_loss, rec, kl = elbo_loss(probs, test_x, mu, logvar)
        print(f"epoch {epoch} train {sum(logged) / len(logged):.4f} test {test_loss:.4f} rec {rec:.4f} kl {kl:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
