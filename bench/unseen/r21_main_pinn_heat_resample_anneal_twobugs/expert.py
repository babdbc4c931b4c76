"""Physics-informed network for the 1-D heat equation u_t = kappa * u_xx on [0,1]x[0,1].

u(x, 0) = sin(pi x), u(0, t) = u(1, t) = 0; exact solution exp(-kappa pi^2 t) sin(pi x).
Collocation points are re-sampled every `resample_every` steps and the boundary /
initial loss weights are adapted with the learning-rate-annealing rule of
Wang, Teng & Perdikaris (2021): lambda_i <- (1-a) lambda_i + a * max|grad L_r| / mean|grad L_i|.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Config:
    seed: int = 0
    n_f: int = 128
    n_b: int = 32
    n_0: int = 32
    hidden: int = 24
    depth: int = 3
    lr: float = 2e-3
    steps: int = 80
    resample_every: int = 20
    anneal_every: int = 10
    anneal_alpha: float = 0.5
    kappa: float = 0.1


class MLP(nn.Module):
    def __init__(self, hidden, depth):
        super().__init__()
        layers, d = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.Tanh()]
            d = hidden
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, xt):
        return self.net(xt)


def pde_residual(model, xt, kappa):
    u = model(xt)
    du = torch.autograd.grad(u, xt, torch.ones_like(u), create_graph=True)[0]
    u_x, u_t = du[:, :1], du[:, 1:]
    u_xx = torch.autograd.grad(u_x, xt, torch.ones_like(u_x), create_graph=True)[0][:, :1]
    return u_t - kappa * u_xx


def grad_stats(loss, params):
    """max and mean of |d loss / d theta| over all network parameters."""
    grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    flat = torch.cat([g.reshape(-1) for g in grads if g is not None]).abs()
    return flat.max().item(), flat.mean().item()


def boundary_data(cfg, g):
    t_b = torch.rand(cfg.n_b, 1, generator=g)
    x_b = torch.cat([torch.zeros(cfg.n_b // 2, 1), torch.ones(cfg.n_b - cfg.n_b // 2, 1)])
    x_0 = torch.rand(cfg.n_0, 1, generator=g)
    xb = torch.cat([x_b, t_b], dim=1)
    x0 = torch.cat([x_0, torch.zeros_like(x_0)], dim=1)
    return xb, x0, torch.sin(math.pi * x_0)


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    model = MLP(cfg.hidden, cfg.depth)
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr)
    xb, x0, u0 = boundary_data(cfg, g)
    x_f = torch.empty(cfg.n_f, 2, requires_grad=True)      # collocation points (need d/dx, d/dt)
    lam_b, lam_0 = 1.0, 1.0
    log = []
    for step in range(cfg.steps):
        if step % cfg.resample_every == 0:
            with torch.no_grad():
                x_f.uniform_(0.0, 1.0)                        # fresh collocation points
        loss_r = pde_residual(model, x_f, cfg.kappa).pow(2).mean()
        loss_b = model(xb).pow(2).mean()
        loss_0 = (model(x0) - u0).pow(2).mean()
        if step % cfg.anneal_every == 0:
            max_r, _ = grad_stats(loss_r, params)
            _, mean_b = grad_stats(loss_b, params)
            _, mean_0 = grad_stats(loss_0, params)
            a = cfg.anneal_alpha
            lam_b = (1 - a) * lam_b + a * max_r / (mean_b + 1e-12)
            lam_0 = (1 - a) * lam_0 + a * max_r / (mean_0 + 1e-12)
        loss = loss_r + lam_b * loss_b + lam_0 * loss_0
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append((loss.item(), loss_r.item(), lam_b, lam_0))

    xs = torch.linspace(0, 1, 21)
    X, T = torch.meshgrid(xs, xs, indexing="ij")
    grid = torch.stack([X.reshape(-1), T.reshape(-1)], dim=1)
    exact = torch.exp(-cfg.kappa * math.pi ** 2 * grid[:, 1:]) * torch.sin(math.pi * grid[:, :1])
    with torch.no_grad():
        rel = ((model(grid) - exact).norm() / exact.norm()).item()
    for s in (0, cfg.steps // 2, cfg.steps - 1):
        loss, lr_, lb, l0 = log[s]
        print(f"step {s:3d} loss {loss:.6f} loss_r {lr_:.6f} lam_b {lb:.6f} lam_0 {l0:.6f}")
    print(f"relative L2 error: {rel:.6f}")


if __name__ == "__main__":
    main()
