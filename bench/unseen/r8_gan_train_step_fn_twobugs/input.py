"""GAN on a ring of 8 Gaussians, with a functional train_step that carries its state.
Run: python input.py [--steps 300 --batch-size 128 ...]"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

Z_DIM = 8


def ring_batch(n, gen, radius=0.8, std=0.05):
    k = torch.randint(0, 8, (n,), generator=gen).float()
    ang = 2 * math.pi * k / 8
    centers = radius * torch.stack([torch.cos(ang), torch.sin(ang)], 1)
    return centers + std * torch.randn(n, 2, generator=gen)


class BoundedOutput(nn.Module):
    """Maps features to points in (-1, 1)^2."""

    def __init__(self, hidden):
        super().__init__()
        self.fc = nn.Linear(hidden, 2)

    def forward(self, h):
        x = torch.sigmoid(self.fc(h))
        return x.mul_(2).sub_(1)


class Generator(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(Z_DIM, hidden), nn.LeakyReLU(0.2),
                                  nn.Linear(hidden, hidden), nn.LeakyReLU(0.2))
        self.head = BoundedOutput(hidden)

    def forward(self, z):
        return self.head(self.body(z))


class Discriminator(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def train_step(models, batch, opts, state):
    """One D update and one G update on the same fake batch; returns the updated state."""
    gen, disc = models
    opt_g, opt_d = opts
    opt_g.zero_grad()
    opt_d.zero_grad()
    n = batch.size(0)
    ones, zeros = torch.ones(n), torch.zeros(n)

    fake = gen(torch.randn(n, Z_DIM, generator=state["noise_gen"]))

    # discriminator: real -> 1, fake -> 0
    d_loss = F.binary_cross_entropy_with_logits(disc(batch), ones) + \
        F.binary_cross_entropy_with_logits(disc(fake), zeros)
    d_loss.backward()
    opt_d.step()

    # generator: make D call the same fakes real
    g_loss = F.binary_cross_entropy_with_logits(disc(fake), ones)
    g_loss.backward()
    opt_g.step()

    state["step"] += 1
    state["d_losses"].append(d_loss.item())
    state["g_losses"].append(g_loss.item())
    return state


@torch.no_grad()
def mode_stats(gen, n=1000, seed=123):
    g = torch.Generator().manual_seed(seed)
    pts = gen(torch.randn(n, Z_DIM, generator=g))
    ang = 2 * math.pi * torch.arange(8) / 8
    centers = 0.8 * torch.stack([torch.cos(ang), torch.sin(ang)], 1)
    dist, idx = torch.cdist(pts, centers).min(1)
    covered = sum(int(((idx == k) & (dist < 0.2)).sum() > 0.03 * n) for k in range(8))
    return covered, dist.mean().item()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    gen, disc = Generator(args.hidden), Discriminator(args.hidden)
    opt_g = torch.optim.Adam(gen.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=args.lr, betas=(0.5, 0.999))
    data_gen = torch.Generator().manual_seed(args.seed + 1)
    state = {"step": 0, "d_losses": [], "g_losses": [],
             "noise_gen": torch.Generator().manual_seed(args.seed + 2)}
    while state["step"] < args.steps:
        state = train_step((gen, disc), ring_batch(args.batch_size, data_gen), (opt_g, opt_d), state)
        if state["step"] % args.log_every == 0:
            d = sum(state["d_losses"][-args.log_every:]) / args.log_every
            g = sum(state["g_losses"][-args.log_every:]) / args.log_every
            print(f"step {state['step']} d_loss {d:.4f} g_loss {g:.4f}")
    covered, mean_dist = mode_stats(gen)
    print(f"modes covered {covered}/8 mean dist {mean_dist:.4f}")
    print(f"checksum G {sum(p.abs().sum() for p in gen.parameters()).item():.4f} "
          f"D {sum(p.abs().sum() for p in disc.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
