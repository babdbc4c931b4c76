"""WGAN-GP on the 8-gaussians toy set (after gulrajani et al.'s gan_toy.py).

Usage: python input.py --iters 100 --critic-iters 5
"""
import argparse
import math

import torch
import torch.nn as nn
from torch import autograd


def parse_args():
    p = argparse.ArgumentParser(description="WGAN-GP toy (8 gaussians)")
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--critic-iters", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--lam", type=float, default=0.1, help="gradient penalty weight")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=25)
    return p.parse_args()


class Generator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, dim), nn.ReLU(True),
            nn.Linear(dim, dim), nn.ReLU(True),
            nn.Linear(dim, 2),
        )

    def forward(self, noise):
        return self.net(noise)


class Critic(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, dim), nn.ReLU(True),
            nn.Linear(dim, dim), nn.ReLU(True),
            nn.Linear(dim, 1),
        )

    def forward(self, x):
        return self.net(x)


class EightGaussians:
    def __init__(self, batch_size, gen):
        scale = 2.0
        centers = [(1, 0), (-1, 0), (0, 1), (0, -1),
                   (1 / math.sqrt(2), 1 / math.sqrt(2)), (1 / math.sqrt(2), -1 / math.sqrt(2)),
                   (-1 / math.sqrt(2), 1 / math.sqrt(2)), (-1 / math.sqrt(2), -1 / math.sqrt(2))]
        self.centers = torch.tensor(centers) * scale
        self.batch_size = batch_size
        self.gen = gen

    def sample(self):
        idx = torch.randint(0, 8, (self.batch_size,), generator=self.gen)
        pts = self.centers[idx] + 0.02 * torch.randn(self.batch_size, 2, generator=self.gen)
        return pts / 1.414


def calc_gradient_penalty(netD, real_data, fake_data, lam, gen):
    alpha = torch.rand(real_data.size(0), 1, generator=gen)
    alpha = alpha.expand(real_data.size())

    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates.requires_grad = True

    disc_interpolates = netD(interpolates)

    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]

    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * lam
    return gradient_penalty


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)

    netG = Generator(args.dim)
    netD = Critic(args.dim)
    optD = torch.optim.Adam(netD.parameters(), lr=args.lr, betas=(0.5, 0.9))
    optG = torch.optim.Adam(netG.parameters(), lr=args.lr, betas=(0.5, 0.9))
    data = EightGaussians(args.batch_size, gen)

    for it in range(1, args.iters + 1):
        # (1) update D network
        for p in netD.parameters():
            p.requires_grad = True
        for _ in range(args.critic_iters):
            real = data.sample()
            noise = torch.randn(args.batch_size, 2, generator=gen)
            fake = netG(noise)

            optD.zero_grad()
            D_real = netD(real).mean()
            D_fake = netD(fake.detach()).mean()
            gradient_penalty = calc_gradient_penalty(netD, real, fake.detach(), args.lam, gen)
            D_cost = D_fake - D_real + gradient_penalty
            Wasserstein_D = D_real - D_fake
            D_cost.backward()
            optD.step()

        # (2) update G network
        for p in netD.parameters():
            p.requires_grad = False
        optG.zero_grad()
        noise = torch.randn(args.batch_size, 2, generator=gen)
        G_cost = -netD(netG(noise)).mean()
        G_cost.backward()
        optG.step()

        if it % args.log_every == 0:
            print(f"iter {it:4d}  D_cost {D_cost.item():.5f}  W_D {Wasserstein_D.item():.5f}  "
                  f"GP {gradient_penalty.item():.5f}  G_cost {G_cost.item():.5f}")

    with torch.no_grad():
        samples = netG(torch.randn(512, 2, generator=gen))
        radius = samples.norm(dim=1).mean().item()
    g_norm = sum(p.detach().pow(2).sum() for p in netG.parameters()).sqrt().item()
    d_norm = sum(p.detach().pow(2).sum() for p in netD.parameters()).sqrt().item()
    print(f"final  mean_radius {radius:.5f}  G_param_norm {g_norm:.5f}  D_param_norm {d_norm:.5f}")


if __name__ == "__main__":
    main()
