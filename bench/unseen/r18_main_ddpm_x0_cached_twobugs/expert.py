"""Toy DDPM on a 2-D spiral with an auxiliary x0-reconstruction loss.

eps-prediction objective (Ho et al. 2020) plus a small weight on the MSE of the
x0 implied by the predicted noise, which helps the low-noise end of the chain.
The timestep MLP is evaluated once for the whole table of timesteps and
indexed per sample.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_spiral(n, g):
    theta = torch.sqrt(torch.rand(n, generator=g)) * 3 * math.pi
    r = theta / (3 * math.pi)
    x = torch.stack([r * torch.cos(theta), r * torch.sin(theta)], 1) * 2.0
    return x + 0.05 * torch.randn(n, 2, generator=g)


def sinusoidal_table(T, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half) / half)
    ang = torch.arange(T).float()[:, None] * freqs[None]
    return torch.cat([ang.sin(), ang.cos()], 1)


class NoiseSchedule(nn.Module):
    def __init__(self, T, beta_start=1e-4, beta_end=0.05):
        super().__init__()
        betas = torch.linspace(beta_start, beta_end, T)
        alphas = 1.0 - betas
        abar = torch.cumprod(alphas, 0)
        self.T = T
        self.register_buffer("betas", betas)
        self.register_buffer("alphas", alphas)
        self.register_buffer("sqrt_abar", abar.sqrt())
        self.register_buffer("sqrt_1m_abar", (1 - abar).sqrt())

    def q_sample(self, x0, t, noise):
        return self.sqrt_abar[t, None] * x0 + self.sqrt_1m_abar[t, None] * noise


class ResBlock(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, hidden * 2)
        self.fc2 = nn.Linear(hidden * 2, hidden)

    def forward(self, h):
        return h + self.fc2(F.silu(self.fc1(self.norm(h))))


class Denoiser(nn.Module):
    def __init__(self, T, hidden=64, temb_dim=32, depth=3):
        super().__init__()
        self.in_proj = nn.Linear(2, hidden)
        self.t_mlp = nn.Sequential(nn.Linear(temb_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.register_buffer("sin_table", sinusoidal_table(T, temb_dim))
        self.blocks = nn.ModuleList(ResBlock(hidden) for _ in range(depth))
        self.out = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, 2))

    @property
    def time_table(self):
        # every timestep's embedding at once, (T, hidden)
        return self.t_mlp(self.sin_table)

    def forward(self, x_t, t):
        h = self.in_proj(x_t) + self.time_table[t]
        for blk in self.blocks:
            h = blk(h)
        return self.out(h)


def diffusion_losses(model, sched, x0, aux_weight):
    t = torch.randint(0, sched.T, (x0.shape[0],))
    noise = torch.randn_like(x0)
    x_t = sched.q_sample(x0, t, noise)
    eps_hat = model(x_t, t)
    eps_loss = F.mse_loss(eps_hat, noise)
    # x0 implied by the predicted noise
    x0_hat = (x_t - sched.sqrt_1m_abar[t, None] * eps_hat) / sched.sqrt_abar[t, None]
    x0_loss = F.mse_loss(x0_hat.clamp(-4, 4), x0)
    return eps_loss, x0_loss, eps_loss + aux_weight * x0_loss


@torch.no_grad()
def sample(model, sched, n, g):
    x = torch.randn(n, 2, generator=g)
    for i in reversed(range(sched.T)):
        t = torch.full((n,), i, dtype=torch.long)
        eps = model(x, t)
        coef = sched.betas[i] / sched.sqrt_1m_abar[i]
        x = (x - coef * eps) / sched.alphas[i].sqrt()
        if i > 0:
            x = x + sched.betas[i].sqrt() * torch.randn(n, 2, generator=g)
    return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n-data", type=int, default=2048)
    p.add_argument("--timesteps", type=int, default=50)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--aux-weight", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    data = make_spiral(args.n_data, g)
    sched = NoiseSchedule(args.timesteps)
    model = Denoiser(args.timesteps)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    for epoch in range(args.epochs):
        perm = torch.randperm(args.n_data, generator=g)
        sums = torch.zeros(3)
        nb = 0
        for i in range(0, args.n_data, args.batch_size):
            x0 = data[perm[i:i + args.batch_size]]
            eps_loss, x0_loss, loss = diffusion_losses(model, sched, x0, args.aux_weight)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sums += torch.tensor([eps_loss.item(), x0_loss.item(), loss.item()])
            nb += 1
        sums /= nb
        print(f"epoch {epoch} eps {sums[0]:.5f} x0 {sums[1]:.5f} total {sums[2]:.5f}")

    model.eval()
    xs = sample(model, sched, 512, g)
    radius = xs.norm(dim=1)
    print(f"samples mean {xs.mean(0).tolist()[0]:.5f} {xs.mean(0).tolist()[1]:.5f} "
          f"radius {radius.mean():.5f} std {xs.std(0).mean():.5f}")
    print(f"param norm {torch.cat([p.flatten() for p in model.parameters()]).norm():.5f}")


if __name__ == "__main__":
    main()
