"""DeepSets regression on variable-size point sets, padded to a fixed size.

Target: mean_i ||p_i|| + max_i p_i[0] over the real (unpadded) points of each set.

    python input.py --config deepsets.json
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F


class DeepSets(nn.Module):
    def __init__(self, point_dim, hidden):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(point_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.rho = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, points, valid):
        h = torch.tanh(self.phi(points))                 # (B, N, H) per-point features
        h[~valid] = 0.0                                  # padded slots must not contribute
        counts = valid.sum(1, keepdim=True).float()
        mean_pool = h.sum(1) / counts
        max_pool = h.masked_fill(~valid.unsqueeze(-1), -1.0).amax(1)
        return self.rho(torch.cat([mean_pool, max_pool], 1)).squeeze(-1)


def make_sets(n, max_set, dim, gen):
    sizes = torch.randint(3, max_set + 1, (n,), generator=gen)
    valid = torch.arange(max_set)[None, :] < sizes[:, None]
    points = torch.randn(n, max_set, dim, generator=gen)
    # padded slots hold leftover garbage from the loader (not zeros)
    points[~valid] = 3.0 * torch.randn(int((~valid).sum()), dim, generator=gen)
    norms = points.norm(dim=-1).masked_fill(~valid, 0.0)
    first = points[..., 0].masked_fill(~valid, float("-inf"))
    y = norms.sum(1) / sizes + first.amax(1)
    return points, valid, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="deepsets.json")
    args = p.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)

    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    train = make_sets(cfg["n_train"], cfg["max_set"], cfg["point_dim"], gen)
    val = make_sets(cfg["n_val"], cfg["max_set"], cfg["point_dim"], gen)
    model = DeepSets(cfg["point_dim"], cfg["hidden"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    print(f"target mean {train[2].mean().item():.4f} std {train[2].std().item():.4f}")

    for epoch in range(cfg["epochs"]):
        model.train()
        perm = torch.randperm(cfg["n_train"], generator=gen)
        total = 0.0
        for idx in perm.split(cfg["batch_size"]):
            pts, valid, y = (t[idx] for t in train)
            loss = F.mse_loss(model(pts, valid), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        model.eval()
        with torch.no_grad():
            val_mse = F.mse_loss(model(val[0], val[1]), val[2]).item()
        print(f"epoch {epoch} train_mse {total / cfg['n_train']:.5f} val_mse {val_mse:.5f}")
    print(f"phi weight norm {model.phi[0].weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
