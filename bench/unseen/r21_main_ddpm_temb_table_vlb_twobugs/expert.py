"""Tiny DDPM with learned-range variance (Nichol & Dhariwal 2021 hybrid loss) on 2-D toy data."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def eight_gaussians(n, generator):
    centers = torch.tensor([[math.cos(a), math.sin(a)] for a in torch.arange(8) * math.pi / 4])
    idx = torch.randint(0, 8, (n,), generator=generator)
    return 2.0 * centers[idx] + 0.15 * torch.randn(n, 2, generator=generator)


class Schedule:
    def __init__(self, T):
        self.T = T
        self.betas = torch.linspace(1e-4, 0.2, T)
        alphas = 1.0 - self.betas
        self.ab = torch.cumprod(alphas, 0)
        self.ab_prev = torch.cat([torch.ones(1), self.ab[:-1]])
        self.post_var = self.betas * (1 - self.ab_prev) / (1 - self.ab)
        self.post_logvar_clipped = torch.log(torch.cat([self.post_var[1:2], self.post_var[1:]]))
        self.coef1 = self.betas * self.ab_prev.sqrt() / (1 - self.ab)
        self.coef2 = (1 - self.ab_prev) * alphas.sqrt() / (1 - self.ab)


def sinusoidal(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half) / half)
    ang = t.float()[:, None] * freqs[None]
    return torch.cat([ang.sin(), ang.cos()], dim=1)


class Denoiser(nn.Module):
    """Predicts eps and the variance interpolation value v for every (x_t, t)."""

    def __init__(self, T, hidden=64, temb=32):
        super().__init__()
        self.register_buffer("sin_table", sinusoidal(torch.arange(T), temb))
        self.time_mlp = nn.Sequential(nn.Linear(temb, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.net = nn.Sequential(nn.Linear(2 + temb, hidden), nn.SiLU(),
                                 nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 4))

    def time_embedding(self, t):
        # the MLP is trained: run it on this batch's sinusoidal features every step
        return self.time_mlp(self.sin_table[t])

    def forward(self, x, t):
        return self.net(torch.cat([x, self.time_embedding(t)], dim=1))


def normal_kl(mean1, logvar1, mean2, logvar2):
    return 0.5 * (-1.0 + logvar2 - logvar1 + torch.exp(logvar1 - logvar2)
                  + (mean1 - mean2) ** 2 * torch.exp(-logvar2))


def hybrid_loss(model_out, x0, xt, t, noise, sch, lam=0.01):
    eps, v = model_out.split(2, dim=1)
    l_simple = F.mse_loss(eps, noise)
    # learned range: interpolate between beta_t and the clipped posterior variance
    frac = (v + 1.0) / 2.0
    min_log = sch.post_logvar_clipped[t][:, None]
    max_log = torch.log(sch.betas[t])[:, None]
    model_logvar = frac * max_log + (1 - frac) * min_log
    # the VLB term only trains the variance: the mean uses a stopped-gradient eps
    ab = sch.ab[t][:, None]
    x0_pred = (xt - (1 - ab).sqrt() * eps.detach()) / ab.sqrt()
    model_mean = sch.coef1[t][:, None] * x0_pred + sch.coef2[t][:, None] * xt
    true_mean = sch.coef1[t][:, None] * x0 + sch.coef2[t][:, None] * xt
    true_logvar = torch.log(sch.post_var[t].clamp(min=1e-20))[:, None]
    kl = normal_kl(true_mean, true_logvar, model_mean, model_logvar).mean(1) / math.log(2.0)
    l_vlb = torch.where(t > 0, kl, torch.zeros_like(kl)).mean()
    return l_simple + lam * l_vlb, l_simple, l_vlb


@torch.no_grad()
def sample(model, sch, n, generator):
    x = torch.randn(n, 2, generator=generator)
    for i in reversed(range(sch.T)):
        t = torch.full((n,), i, dtype=torch.long)
        eps, v = model(x, t).split(2, dim=1)
        frac = (v + 1) / 2
        logvar = frac * torch.log(sch.betas[i]) + (1 - frac) * sch.post_logvar_clipped[i]
        x0 = (x - (1 - sch.ab[i]).sqrt() * eps) / sch.ab[i].sqrt()
        mean = sch.coef1[i] * x0 + sch.coef2[i] * x
        x = mean + (torch.exp(0.5 * logvar) * torch.randn(n, 2, generator=generator) if i > 0 else 0)
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--T", type=int, default=40)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    data = eight_gaussians(1024, g)
    sch = Schedule(args.T)
    model = Denoiser(args.T)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    hist = []
    for step in range(args.steps):
        x0 = data[torch.randint(0, data.shape[0], (args.batch,), generator=g)]
        t = torch.randint(0, args.T, (args.batch,), generator=g)
        noise = torch.randn(x0.shape, generator=g)
        ab = sch.ab[t][:, None]
        xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
        loss, l_simple, l_vlb = hybrid_loss(model(xt, t), x0, xt, t, noise, sch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append((loss.item(), l_simple.item(), l_vlb.item()))
    for s in (0, args.steps // 2, args.steps - 1):
        print(f"step {s:3d} loss {hist[s][0]:.6f} simple {hist[s][1]:.6f} vlb {hist[s][2]:.6f}")
    xs = sample(model, sch, 256, torch.Generator().manual_seed(7))
    print(f"samples: mean {xs.mean(0).tolist()[0]:.6f} {xs.mean(0).tolist()[1]:.6f} "
          f"radius {xs.norm(dim=1).mean().item():.6f}")


if __name__ == "__main__":
    main()
