"""Volume rendering with the classic roll-based exclusive cumprod."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def cumprod_exclusive(t):
    cp = torch.cumprod(t, -1)
    cp = torch.roll(cp, 1, -1)      # fresh tensor: writing into it is fine
    cp[..., 0] = 1.0
    return cp


def render(raw, z_vals, noise_std=0.0, gen=None):
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.full_like(dists[..., :1], 1e10)], -1)
    rgb = torch.sigmoid(raw[..., :3])
    if noise_std > 0:
        raw[..., 3] += torch.randn(raw[..., 3].shape, generator=gen) * noise_std  # Linear output
    alpha = 1.0 - torch.exp(-F.relu(raw[..., 3]) * dists)
    weights = alpha * cumprod_exclusive(1.0 - alpha + 1e-10)
    return (weights[..., None] * rgb).sum(-2) + (1.0 - weights.sum(-1, keepdim=True))


class Field(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def forward(self, p):
        enc = torch.cat([p, torch.sin(p), torch.cos(p), torch.sin(2 * p), torch.cos(2 * p)], -1)
        return self.net(enc)


def run(cfg, gen):
    n, s = cfg["n_rays"], cfg["n_samples"]
    theta = torch.rand(n, generator=gen) * 2 * math.pi
    o = torch.stack([2 * torch.cos(theta), 2 * torch.sin(theta)], -1)
    d = -o / 2.0
    z = torch.linspace(0.5, 3.5, s).expand(n, s)
    pts = o[:, None] + d[:, None] * z[..., None]
    with torch.no_grad():
        dens = 30 * torch.exp(-((pts - 0.3) ** 2).sum(-1) / 0.05)
        col = torch.stack([torch.sigmoid(pts[..., 0] * 3), torch.sigmoid(pts[..., 1] * 3),
                           torch.full_like(pts[..., 0], 0.5)], -1)
        target = render(torch.cat([torch.logit(col), dens[..., None]], -1), z)
    model = Field()
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        tot = 0.0
        for i in range(0, n, 64):
            loss = F.mse_loss(render(model(pts[i:i + 64]), z[i:i + 64], cfg["raw_noise_std"], gen),
                              target[i:i + 64])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item()
        print(f"render epoch {epoch} mse {tot / (n // 64):.6f}")
    return model
