"""SNGAN (hinge loss) on a 2-D swiss roll with a hand-written spectral-norm layer.

The SN layer keeps the left singular vector estimate `u` as a buffer and refines it with one
power iteration per forward pass (Miyato et al., 2018), like the pre-1.0 ports did.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--nz", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr-d", type=float, default=4e-4)
    ap.add_argument("--lr-g", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--log-every", type=int, default=50)
    return ap.parse_args()


class SNLinear(nn.Linear):
    """Linear layer whose weight is divided by its largest singular value."""

    def __init__(self, in_features, out_features, bias=True, eps=1e-12):
        super().__init__(in_features, out_features, bias)
        self.eps = eps
        self.register_buffer("u", F.normalize(torch.randn(out_features), dim=0, eps=eps))

    def forward(self, x):
        w = self.weight
        with torch.no_grad():
            v = F.normalize(torch.mv(w.t(), self.u), dim=0, eps=self.eps)
            u = F.normalize(torch.mv(w, v), dim=0, eps=self.eps)
            self.u.copy_(u)
        sigma = torch.dot(u, torch.mv(w, v))
        return F.linear(x, w / sigma, self.bias)


class Discriminator(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.l1 = SNLinear(2, hidden)
        self.l2 = SNLinear(hidden, hidden)
        self.l3 = SNLinear(hidden, 1)

    def forward(self, x):
        h = F.leaky_relu(self.l1(x), 0.1)
        h = F.leaky_relu(self.l2(h), 0.1)
        return self.l3(h)

    def sigmas(self):
        out = []
        for layer in (self.l1, self.l2, self.l3):
            out.append(torch.linalg.matrix_norm(layer.weight.detach(), ord=2).item())
        return out


class Generator(nn.Module):
    def __init__(self, nz, hidden):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(nz, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 2),
        )

    def forward(self, z):
        return self.net(z)


def swiss_roll(n, gen):
    t = 1.5 * math.pi * (1 + 2 * torch.rand(n, generator=gen))
    x = torch.stack([t * torch.cos(t), t * torch.sin(t)], 1) / 7.5
    return x + 0.05 * torch.randn(n, 2, generator=gen)


def main():
    args = get_args()
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    G = Generator(args.nz, args.hidden)
    D = Discriminator(args.hidden)
    opt_g = torch.optim.Adam(G.parameters(), lr=args.lr_g, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=args.lr_d, betas=(0.0, 0.9))

    for step in range(1, args.steps + 1):
        real = swiss_roll(args.batch_size, gen)
        z = torch.randn(args.batch_size, args.nz, generator=gen)

        # discriminator: hinge loss on real and fake
        fake = G(z).detach()
        d_loss = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake)).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()

        # generator
        z = torch.randn(args.batch_size, args.nz, generator=gen)
        g_loss = -D(G(z)).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()

        if step % args.log_every == 0:
            print(f"step {step:4d}  d_loss {d_loss.item():.5f}  g_loss {g_loss.item():.5f}")

    with torch.no_grad():
        s = G(torch.randn(1000, args.nz, generator=gen))
        radius = s.norm(dim=1).mean().item()
    sig = D.sigmas()
    print(f"final  sample_radius {radius:.5f}  raw_sigma " + " ".join(f"{v:.5f}" for v in sig)
          + f"  u_norm {D.l2.u.norm().item():.5f}")


if __name__ == "__main__":
    main()
