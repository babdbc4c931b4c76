"""Energy-based model on a 2-D ring of Gaussians, trained with persistent
contrastive divergence (PCD): the SGLD chains live in a replay buffer and are
advanced in place, so every chain continues from where it stopped the last time
its slot was visited.
"""
import argparse
import math

import torch
import torch.nn as nn


class EnergyNet(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


def sample_ring(n, gen, modes=8, radius=2.0, std=0.15):
    k = torch.randint(0, modes, (n,), generator=gen).float()
    ang = 2 * math.pi * k / modes
    centers = torch.stack([radius * torch.cos(ang), radius * torch.sin(ang)], 1)
    return centers + std * torch.randn(n, 2, generator=gen)


def run_chains(energy, buffer, start, batch, n_steps, step_size, noise, gen):
    """Advance buffer[start:start+batch] by n_steps of SGLD (in place, persistent)."""
    x = buffer[start:start + batch]
    x.requires_grad_(True)
    for _ in range(n_steps):
        e = energy(x).sum()
        grad, = torch.autograd.grad(e, x)
        with torch.no_grad():
            x.add_(-step_size * grad + noise * torch.randn(x.shape, generator=gen))
    x.requires_grad_(False)
    return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--buffer", type=int, default=256)
    p.add_argument("--iters", type=int, default=80)
    p.add_argument("--sgld-steps", type=int, default=10)
    p.add_argument("--step-size", type=float, default=0.05)
    p.add_argument("--noise", type=float, default=0.01)
    p.add_argument("--reinit", type=float, default=0.05)
    p.add_argument("--reg", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)
    energy = EnergyNet(args.hidden)
    opt = torch.optim.Adam(energy.parameters(), lr=args.lr, betas=(0.0, 0.999))
    buffer = torch.rand(args.buffer, 2, generator=gen) * 6 - 3

    log = []
    for it in range(args.iters):
        start = (it * args.batch) % args.buffer
        # restart a few chains from uniform noise
        fresh = torch.rand(args.batch, generator=gen) < args.reinit
        chunk = buffer[start:start + args.batch]
        chunk[fresh] = torch.rand(int(fresh.sum()), 2, generator=gen) * 6 - 3

        x_neg = run_chains(energy, buffer, start, args.batch, args.sgld_steps,
                           args.step_size, args.noise, gen)
        x_pos = sample_ring(args.batch, gen)

        e_pos = energy(x_pos)
        e_neg = energy(x_neg)
        loss = e_pos.mean() - e_neg.mean() + args.reg * (e_pos.pow(2).mean() + e_neg.pow(2).mean())
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append((loss.item(), e_pos.mean().item(), e_neg.mean().item()))

    radius = buffer.norm(dim=1)
    checksum = sum(p.double().abs().sum().item() for p in energy.parameters())
    print(f"final_loss {log[-1][0]:.6f}")
    print(f"final_e_pos {log[-1][1]:.6f} final_e_neg {log[-1][2]:.6f}")
    print(f"buffer_mean_radius {radius.mean().item():.6f}")
    print(f"buffer_std {buffer.std().item():.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
