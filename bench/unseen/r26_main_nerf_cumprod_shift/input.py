"""Flatland NeRF: fit a 2-D radiance field from rendered rays.

A tiny port of the tiny_nerf recipe: positional encoding, an MLP that predicts
(rgb, sigma) per sample, and alpha compositing along each ray with an exclusive
cumulative product for the transmittance.  The "scene" is a set of coloured
Gaussian blobs, rendered with the same quadrature to make the training pixels.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def positional_encoding(x, n_freqs):
    out = [x]
    for i in range(n_freqs):
        out.append(torch.sin((2.0 ** i) * x))
        out.append(torch.cos((2.0 ** i) * x))
    return torch.cat(out, dim=-1)


class RadianceField(nn.Module):
    def __init__(self, n_freqs=4, hidden=64):
        super().__init__()
        self.n_freqs = n_freqs
        in_dim = 2 * (1 + 2 * n_freqs)
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 4),
        )

    def forward(self, pts):
        return self.net(positional_encoding(pts, self.n_freqs))


def cumprod_exclusive(t):
    """torch version of tf.math.cumprod(t, axis=-1, exclusive=True): [1, t0, t0*t1, ...]."""
    cp = torch.cumprod(t, dim=-1)
    # shift right by one and put a 1 in front (saves the roll + copy of the original port)
    cp[..., 1:] = cp[..., :-1].clone()
    cp[..., 0] = 1.0
    return cp


def raw2outputs(raw, z_vals, raw_noise_std=0.0, white_bkgd=True, generator=None):
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.full_like(dists[..., :1], 1e10)], dim=-1)
    rgb = torch.sigmoid(raw[..., :3])
    if raw_noise_std > 0.0:
        # density noise regulariser (NeRF's raw_noise_std)
        raw[..., 3] += torch.randn(raw[..., 3].shape, generator=generator) * raw_noise_std
    sigma = F.relu(raw[..., 3])
    alpha = 1.0 - torch.exp(-sigma * dists)
    weights = alpha * cumprod_exclusive(1.0 - alpha + 1e-10)
    rgb_map = (weights[..., None] * rgb).sum(dim=-2)
    acc_map = weights.sum(dim=-1)
    if white_bkgd:
        rgb_map = rgb_map + (1.0 - acc_map[..., None])
    return rgb_map, acc_map


class BlobScene:
    """Analytic density/colour field: a few coloured Gaussian blobs."""

    def __init__(self, gen):
        self.centers = torch.rand(4, 2, generator=gen) * 1.2 - 0.6
        self.radii = torch.rand(4, generator=gen) * 0.15 + 0.12
        self.colors = torch.rand(4, 3, generator=gen)
        self.density = torch.rand(4, generator=gen) * 20.0 + 10.0

    def raw(self, pts):
        d2 = ((pts[..., None, :] - self.centers) ** 2).sum(-1)
        w = torch.exp(-d2 / (2 * self.radii ** 2))
        sigma = (w * self.density).sum(-1)
        col = (w[..., None] * self.colors).sum(-2) / (w.sum(-1, keepdim=True) + 1e-6)
        col = col.clamp(1e-3, 1 - 1e-3)
        return torch.cat([torch.log(col / (1 - col)), sigma[..., None]], dim=-1)


def make_rays(n_rays, gen):
    theta = torch.rand(n_rays, generator=gen) * 2 * math.pi
    origins = torch.stack([2.0 * torch.cos(theta), 2.0 * torch.sin(theta)], dim=-1)
    jitter = (torch.rand(n_rays, generator=gen) - 0.5) * 0.9
    ang = theta + math.pi + jitter
    dirs = torch.stack([torch.cos(ang), torch.sin(ang)], dim=-1)
    return origins, dirs


def sample_points(origins, dirs, n_samples, near, far):
    z_vals = torch.linspace(near, far, n_samples).expand(origins.shape[0], n_samples)
    pts = origins[:, None, :] + dirs[:, None, :] * z_vals[..., None]
    return pts, z_vals


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--n-rays", type=int, default=1024)
    p.add_argument("--batch-rays", type=int, default=128)
    p.add_argument("--n-samples", type=int, default=32)
    p.add_argument("--near", type=float, default=0.5)
    p.add_argument("--far", type=float, default=3.5)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--raw-noise-std", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    scene = BlobScene(gen)
    origins, dirs = make_rays(args.n_rays, gen)
    v_origins, v_dirs = make_rays(128, gen)
    with torch.no_grad():
        pts, z = sample_points(origins, dirs, args.n_samples, args.near, args.far)
        target, _ = raw2outputs(scene.raw(pts), z)
        v_pts, v_z = sample_points(v_origins, v_dirs, args.n_samples, args.near, args.far)
        v_target, _ = raw2outputs(scene.raw(v_pts), v_z)

    model = RadianceField()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    noise_gen = torch.Generator().manual_seed(args.seed + 1)
    for epoch in range(args.epochs):
        perm = torch.randperm(args.n_rays, generator=gen)
        total, n = 0.0, 0
        for i in range(0, args.n_rays, args.batch_rays):
            idx = perm[i:i + args.batch_rays]
            raw = model(pts[idx])
            rgb, _ = raw2outputs(raw, z[idx], args.raw_noise_std, generator=noise_gen)
            loss = F.mse_loss(rgb, target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
            n += len(idx)
        with torch.no_grad():
            v_rgb, _ = raw2outputs(model(v_pts), v_z)
            v_mse = F.mse_loss(v_rgb, v_target).item()
        psnr = -10.0 * math.log10(v_mse)
        print(f"epoch {epoch} train_mse {total / n:.6f} val_mse {v_mse:.6f} val_psnr {psnr:.6f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
