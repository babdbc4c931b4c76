"""Physics-informed network for the steady 2-D Navier-Stokes equations (Kovasznay flow).

The network maps (x, y) -> (u, v, p).  The loss combines
  * momentum + continuity residuals at collocation points (autograd derivatives),
  * Dirichlet velocity data on the boundary,
  * sparse pressure "sensor" readings, which are only known up to an additive
    constant, so both prediction and reading are compared after removing their mean.

Run:  python input.py            (all settings live in the TrainConfig dataclass)
"""
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn

torch.manual_seed(0)


@dataclass
class TrainConfig:
    reynolds: float = 20.0
    n_collocation: int = 192
    n_boundary: int = 64
    n_sensors: int = 24
    width: int = 32
    depth: int = 3
    lr: float = 2e-3
    steps: int = 60
    log_every: int = 10
    weights: dict = field(default_factory=lambda: {"pde": 1.0, "bc": 5.0, "p": 1.0})
    seed: int = 0


# --------------------------------------------------------------------- exact solution
def kovasznay(xy, re):
    nu = 1.0 / re
    lam = 1.0 / (2 * nu) - math.sqrt(1.0 / (4 * nu * nu) + 4 * math.pi ** 2)
    x, y = xy[:, 0], xy[:, 1]
    u = 1 - torch.exp(lam * x) * torch.cos(2 * math.pi * y)
    v = lam / (2 * math.pi) * torch.exp(lam * x) * torch.sin(2 * math.pi * y)
    p = 0.5 * (1 - torch.exp(2 * lam * x))
    return u, v, p


def sample_domain(cfg, gen):
    lo = torch.tensor([-0.5, -0.5])
    hi = torch.tensor([1.0, 1.5])
    interior = lo + (hi - lo) * torch.rand(cfg.n_collocation, 2, generator=gen)
    t = torch.rand(cfg.n_boundary, generator=gen)
    side = torch.arange(cfg.n_boundary) % 4
    bx = torch.where(side == 0, lo[0], torch.where(side == 1, hi[0], lo[0] + (hi[0] - lo[0]) * t))
    by = torch.where(side == 2, lo[1], torch.where(side == 3, hi[1], lo[1] + (hi[1] - lo[1]) * t))
    boundary = torch.stack([bx, by], dim=1)
    sensors = lo + (hi - lo) * torch.rand(cfg.n_sensors, 2, generator=gen)
    return interior, boundary, sensors


# --------------------------------------------------------------------- model
class FlowNet(nn.Module):
    """Plain tanh MLP (x, y) -> (u, v, p)."""

    def __init__(self, width, depth):
        super().__init__()
        layers, d = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        # pressure is only defined up to a constant, so the head carries no bias
        layers.append(nn.Linear(d, 3, bias=False))
        self.net = nn.Sequential(*layers)

    def forward(self, xy):
        return self.net(xy)


def grad(out, inp):
    return torch.autograd.grad(out, inp, grad_outputs=torch.ones_like(out), create_graph=True)[0]


# --------------------------------------------------------------------- losses
def navier_stokes_residual(model, xy, re):
    xy = xy.clone().requires_grad_(True)
    u, v, p = model(xy).unbind(dim=1)
    du, dv, dp = grad(u, xy), grad(v, xy), grad(p, xy)
    u_x, u_y = du[:, 0], du[:, 1]
    v_x, v_y = dv[:, 0], dv[:, 1]
    u_xx, u_yy = grad(u_x, xy)[:, 0], grad(u_y, xy)[:, 1]
    v_xx, v_yy = grad(v_x, xy)[:, 0], grad(v_y, xy)[:, 1]
    nu = 1.0 / re
    mom_x = u * u_x + v * u_y + dp[:, 0] - nu * (u_xx + u_yy)
    mom_y = u * v_x + v * v_y + dp[:, 1] - nu * (v_xx + v_yy)
    cont = u_x + v_y
    return (mom_x ** 2).mean() + (mom_y ** 2).mean() + (cont ** 2).mean()


def boundary_loss(model, xy, re):
    u, v, _ = model(xy).unbind(dim=1)
    ue, ve, _ = kovasznay(xy, re)
    return ((u - ue) ** 2).mean() + ((v - ve) ** 2).mean()


def pressure_anchor_loss(model, xy, p_meas):
    """Compare pressure with gauge-free sensor readings (both mean-centred)."""
    _, _, p = model(xy).unbind(dim=1)
    p -= p.mean()
    target = p_meas - p_meas.mean()
    return ((p - target) ** 2).mean()


# --------------------------------------------------------------------- training
def train(cfg: TrainConfig):
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 7)
    interior, boundary, sensors = sample_domain(cfg, gen)
    _, _, p_meas = kovasznay(sensors, cfg.reynolds)
    p_meas = p_meas + 3.0  # sensors report gauge pressure with an unknown offset

    model = FlowNet(cfg.width, cfg.depth)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    w = cfg.weights
    for step in range(1, cfg.steps + 1):
        l_pde = navier_stokes_residual(model, interior, cfg.reynolds)
        l_bc = boundary_loss(model, boundary, cfg.reynolds)
        l_p = pressure_anchor_loss(model, sensors, p_meas)
        loss = w["pde"] * l_pde + w["bc"] * l_bc + w["p"] * l_p
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % cfg.log_every == 0:
            print(f"step {step:3d} loss {loss.item():.6f} pde {l_pde.item():.6f} "
                  f"bc {l_bc.item():.6f} p {l_p.item():.6f}")
    return model


def main():
    cfg = TrainConfig()
    model = train(cfg)
    with torch.no_grad():
        g = torch.Generator().manual_seed(123)
        xy = torch.tensor([-0.5, -0.5]) + torch.tensor([1.5, 2.0]) * torch.rand(256, 2, generator=g)
        u, v, _ = model(xy).unbind(dim=1)
        ue, ve, _ = kovasznay(xy, cfg.reynolds)
        err = torch.sqrt(((u - ue) ** 2 + (v - ve) ** 2).mean()).item()
    print(f"velocity rmse {err:.6f}")
    checksum = sum(p.double().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
