"""Spectrally-normalised GAN (BigGAN-style: SN in G and D) on a ring of 8 Gaussians,
with an R1 penalty on real data and an EMA copy of the generator started at --ema-start."""
import argparse
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm


def snlinear(i, o):
    return spectral_norm(nn.Linear(i, o))


class Generator(nn.Module):
    def __init__(self, z_dim, hidden):
        super().__init__()
        self.net = nn.Sequential(
            snlinear(z_dim, hidden), nn.ReLU(),
            snlinear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 2),
        )

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(
            snlinear(2, hidden), nn.LeakyReLU(0.2),
            snlinear(hidden, hidden), nn.LeakyReLU(0.2),
            snlinear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


def ring_batch(n, generator, radius=2.0, std=0.05):
    k = torch.randint(0, 8, (n,), generator=generator)
    ang = k.float() * (2 * math.pi / 8)
    centers = torch.stack([radius * torch.cos(ang), radius * torch.sin(ang)], dim=1)
    return centers + std * torch.randn(n, 2, generator=generator)


@torch.no_grad()
def ema_update(g_ema, g, decay):
    for p_ema, p in zip(g_ema.parameters(), g.parameters()):
        p_ema.lerp_(p, 1.0 - decay)
    for b_ema, b in zip(g_ema.buffers(), g.buffers()):
        b_ema.copy_(b)


@torch.no_grad()
def mode_stats(samples, radius=2.0):
    ang = torch.arange(8).float() * (2 * math.pi / 8)
    centers = torch.stack([radius * torch.cos(ang), radius * torch.sin(ang)], dim=1)
    d = torch.cdist(samples, centers)
    dist, idx = d.min(dim=1)
    good = dist < 0.3
    covered = torch.unique(idx[good]).numel()
    return covered, good.float().mean().item(), dist.mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--z-dim", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--r1-gamma", type=float, default=1.0)
    parser.add_argument("--ema-start", type=int, default=100)
    parser.add_argument("--ema-decay", type=float, default=0.98)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    data_gen = torch.Generator().manual_seed(args.seed + 1)
    noise_gen = torch.Generator().manual_seed(args.seed + 2)
    G = Generator(args.z_dim, args.hidden)
    D = Discriminator(args.hidden)
    opt_g = torch.optim.Adam(G.parameters(), lr=args.lr, betas=(0.0, 0.99))
    opt_d = torch.optim.Adam(D.parameters(), lr=args.lr, betas=(0.0, 0.99))
    G_ema = None

    for step in range(1, args.steps + 1):
        # ---- discriminator: logistic loss + R1 on real data ----
        real = ring_batch(args.batch_size, data_gen)
        z = torch.randn(args.batch_size, args.z_dim, generator=noise_gen)
        with torch.no_grad():
            fake = G(z)
        real.requires_grad_(True)          # R1 needs the graph from `real` to D(real)
        d_real = D(real)
        d_fake = D(fake)
        d_loss = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()

        grad_real, = torch.autograd.grad(d_real.sum(), real, create_graph=True)
        r1 = grad_real.pow(2).sum(dim=1).mean()

        opt_d.zero_grad(set_to_none=True)
        (d_loss + 0.5 * args.r1_gamma * r1).backward()
        opt_d.step()

        # ---- generator: non-saturating loss ----
        z = torch.randn(args.batch_size, args.z_dim, generator=noise_gen)
        g_loss = F.softplus(-D(G(z))).mean()
        opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        opt_g.step()

        # ---- EMA of G (BigGAN's --ema_start) ----
        if step == args.ema_start:
            # deepcopy fails on spectral_norm's computed `weight` attribute: build a fresh G and copy the state
            G_ema = Generator(args.z_dim, args.hidden)
            G_ema.load_state_dict(G.state_dict())
            G_ema.eval()
        elif G_ema is not None:
            ema_update(G_ema, G, args.ema_decay)

        if step % args.log_every == 0:
            print(f"step {step:4d} d_loss {d_loss.item():.5f} g_loss {g_loss.item():.5f} r1 {r1.item():.5f}")

    z = torch.randn(2000, args.z_dim, generator=torch.Generator().manual_seed(123))
    with torch.no_grad():
        for name, net in (("G", G.eval()), ("G_ema", G_ema)):
            covered, frac, mdist = mode_stats(net(z))
            print(f"{name:5s} modes {covered}/8 on-mode {frac:.4f} mean dist {mdist:.5f}")
    checksum = sum(p.double().abs().sum().item() for p in G_ema.parameters())
    print(f"G_ema checksum {checksum:.5f}")


if __name__ == "__main__":
    main()
