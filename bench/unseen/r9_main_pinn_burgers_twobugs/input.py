"""Physics-informed network for the viscous Burgers equation

    u_t + u u_x - nu u_xx = 0,  x in [-1, 1], t in [0, 1]
    u(x, 0) = -sin(pi x),  u(-1, t) = u(1, t) = 0

Collocation points are resampled every --resample-every epochs.
"""
import argparse
import math

import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers, d = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def pde_residual(model, x, t, nu):
    u = model(x, t)
    ones = torch.ones_like(u)
    u_x = torch.autograd.grad(u, x, ones, create_graph=True)[0]
    u_xx = torch.autograd.grad(u_x, x, torch.ones_like(u_x), create_graph=True)[0]
    u_t = torch.autograd.grad(u, t, ones)[0]
    return u_t + u * u_x - nu * u_xx


def boundary_batch(n, gen):
    x0 = torch.rand(n, 1, generator=gen) * 2 - 1
    t0 = torch.zeros(n, 1)
    tb = torch.rand(n, 1, generator=gen)
    xb = torch.where(torch.rand(n, 1, generator=gen) < 0.5, -1.0, 1.0)
    return (x0, t0, -torch.sin(math.pi * x0)), (xb, tb, torch.zeros(n, 1))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--n-col", type=int, default=256)
    p.add_argument("--n-bc", type=int, default=64)
    p.add_argument("--width", type=int, default=24)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--nu", type=float, default=0.01 / math.pi)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--resample-every", type=int, default=100)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(args.seed)
    model = MLP(args.width, args.depth)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    x_col = (torch.rand(args.n_col, 1, generator=gen) * 2 - 1).requires_grad_(True)
    t_col = torch.rand(args.n_col, 1, generator=gen).requires_grad_(True)
    ic, bc = boundary_batch(args.n_bc, gen)

    for epoch in range(args.epochs):
        if epoch > 0 and epoch % args.resample_every == 0:
            # fresh collocation points (random resampling strategy)
            x_col.uniform_(-1.0, 1.0, generator=gen)
            t_col.uniform_(0.0, 1.0, generator=gen)

        res = pde_residual(model, x_col, t_col, args.nu)
        loss_pde = res.pow(2).mean()
        loss_ic = (model(ic[0], ic[1]) - ic[2]).pow(2).mean()
        loss_bc = (model(bc[0], bc[1]) - bc[2]).pow(2).mean()
        loss = loss_pde + 10.0 * (loss_ic + loss_bc)

        opt.zero_grad()
        loss.backward()
        opt.step()
        if epoch % args.log_every == 0 or epoch == args.epochs - 1:
            print(f"epoch {epoch:4d} loss {loss.item():.6f} pde {loss_pde.item():.6f} "
                  f"ic {loss_ic.item():.6f} bc {loss_bc.item():.6f}")

    with torch.no_grad():
        xs = torch.linspace(-1, 1, 5).unsqueeze(1)
        u = model(xs, torch.full_like(xs, 0.5)).squeeze(1)
    print("u(x, t=0.5) at x=-1,-0.5,0,0.5,1:", " ".join(f"{v:.5f}" for v in u.tolist()))


if __name__ == "__main__":
    main()
