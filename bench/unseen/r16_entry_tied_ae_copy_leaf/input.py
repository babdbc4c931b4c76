"""Denoising autoencoder with tied weights (decoder = encoder transposed)."""
import argparse

import torch
import torch.nn.functional as F

from tiedae import TiedAutoencoder


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dims", default="20,12,6")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--noise", type=float, default=0.3)
    return p.parse_args()


def make_data(n, d, rank=4):
    g = torch.Generator().manual_seed(7)
    basis = torch.randn(rank, d, generator=g)
    codes = torch.randn(n, rank, generator=g)
    return torch.tanh(codes @ basis / 2) + 0.05 * torch.randn(n, d, generator=g)


def main():
    args = parse_args()
    torch.manual_seed(0)
    dims = [int(v) for v in args.dims.split(",")]
    x = make_data(512, dims[0])
    model = TiedAutoencoder(dims)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(x.shape[0])
        for i in range(0, x.shape[0], args.batch):
            clean = x[perm[i:i + args.batch]]
            noisy = clean + args.noise * torch.randn_like(clean)
            loss = F.mse_loss(model(noisy), clean)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 6 == 0:
                print(f"epoch {epoch} step {step:3d} loss {loss.item():.5f}")
    with torch.no_grad():
        recon = F.mse_loss(model(x), x).item()
        norms = " ".join(f"{l.weight.norm().item():.5f}" for l in model.encoder)
    print(f"clean recon {recon:.5f}")
    print(f"encoder weight norms {norms}")


if __name__ == "__main__":
    main()
