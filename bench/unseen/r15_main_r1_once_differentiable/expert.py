"""Toy StyleGAN2-style GAN on a 2-D mixture of Gaussians with lazy-free R1 regularisation.

The discriminator uses a hand-written fused bias + leaky-ReLU autograd Function (the CPU
fallback of a CUDA kernel).
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import once_differentiable


class FusedLeakyReLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias, negative_slope, scale):
        out = F.leaky_relu(x + bias, negative_slope) * scale
        ctx.save_for_backward(out)
        ctx.negative_slope, ctx.scale = negative_slope, scale
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        gain = torch.where(out > 0, ctx.scale, ctx.negative_slope * ctx.scale)
        grad_input = grad_output * gain
        return grad_input, grad_input.sum(0), None, None


class FusedLeakyReLU(nn.Module):
    def __init__(self, channels, negative_slope=0.2, scale=math.sqrt(2)):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(channels))
        self.negative_slope, self.scale = negative_slope, scale

    def forward(self, x):
        return FusedLeakyReLUFunction.apply(x, self.bias, self.negative_slope, self.scale)


def mlp(sizes, act_last=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1], bias=False))
        if i < len(sizes) - 2 or act_last:
            layers.append(FusedLeakyReLU(sizes[i + 1]))
    return nn.Sequential(*layers)


def sample_real(n, g):
    angles = torch.randint(0, 8, (n,), generator=g).float() * (2 * math.pi / 8)
    centers = torch.stack([torch.cos(angles), torch.sin(angles)], 1) * 2.0
    return centers + 0.05 * torch.randn(n, 2, generator=g)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=60)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--z-dim", type=int, default=8)
    p.add_argument("--r1-gamma", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed + 1)
    G = mlp([args.z_dim, 32, 32, 2])
    D = mlp([2, 32, 32, 1])
    opt_g = torch.optim.Adam(G.parameters(), lr=args.lr, betas=(0.0, 0.99))
    opt_d = torch.optim.Adam(D.parameters(), lr=args.lr, betas=(0.0, 0.99))

    for it in range(1, args.iters + 1):
        # ---- discriminator: non-saturating loss + R1 on real samples
        real = sample_real(args.batch, g).requires_grad_(True)
        z = torch.randn(args.batch, args.z_dim, generator=g)
        fake = G(z).detach()
        real_pred, fake_pred = D(real), D(fake)
        d_adv = F.softplus(fake_pred).mean() + F.softplus(-real_pred).mean()
        (grad_real,) = torch.autograd.grad(real_pred.sum(), real, create_graph=True)
        r1 = grad_real.pow(2).sum(1).mean()
        d_loss = d_adv + args.r1_gamma / 2 * r1
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()

        # ---- generator
        z = torch.randn(args.batch, args.z_dim, generator=g)
        g_loss = F.softplus(-D(G(z))).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()

        if it % 10 == 0:
            print(f"iter {it:3d} d_adv {d_adv.item():.4f} r1 {r1.item():.4f} g_loss {g_loss.item():.4f}")

    with torch.no_grad():
        samples = G(torch.randn(512, args.z_dim, generator=g))
    radius = samples.norm(dim=1)
    print(f"final mean_radius {radius.mean().item():.4f} std_radius {radius.std().item():.4f}")


if __name__ == "__main__":
    main()
