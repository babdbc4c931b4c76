import json
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

from .losses import zinb_nll
from .model import ZINBAutoencoder


def simulate_counts(cfg, gen):
    n, g, k = cfg["n_cells"], cfg["n_genes"], cfg["n_types"]
    cell_type = torch.randint(0, k, (n,), generator=gen)
    log_mu = torch.randn(k, g, generator=gen) + 1.0
    size = torch.exp(0.3 * torch.randn(n, generator=gen))
    mu = torch.exp(log_mu[cell_type]) * size[:, None]
    theta = 2.0
    lam = torch.distributions.Gamma(theta, theta / mu).sample()
    counts = torch.poisson(lam, generator=gen)
    dropout = torch.rand(n, g, generator=gen) < cfg["dropout_rate"]
    return counts.masked_fill(dropout, 0.0)


def main():
    with open(os.path.join(os.path.dirname(__file__), "config.json")) as f:
        cfg = json.load(f)
    torch.manual_seed(cfg["seed"])
    counts = simulate_counts(cfg, torch.Generator().manual_seed(cfg["seed"] + 1))
    lib = counts.sum(1)
    size_factors = lib / lib.median()
    x_norm = torch.log1p(counts / size_factors[:, None])
    x_norm = (x_norm - x_norm.mean(0)) / (x_norm.std(0) + 1e-6)
    loader = DataLoader(TensorDataset(x_norm, counts, size_factors), batch_size=cfg["batch_size"],
                        shuffle=True, generator=torch.Generator().manual_seed(cfg["seed"] + 2))
    model = ZINBAutoencoder(cfg["n_genes"], cfg["hidden"], cfg["input_noise"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    step = 0
    for epoch in range(cfg["epochs"]):
        model.train()
        for xb, cb, sf in loader:
            _, mean, disp, pi = model(xb)
            loss = zinb_nll(cb, mean, disp, pi, sf, ridge_lambda=cfg["ridge_pi"])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["clip_norm"])
            opt.step()
            print(f"epoch {epoch} step {step:3d} zinb_nll {loss.item():.6f}")
            step += 1
    model.eval()
    with torch.no_grad():
        z, mean, disp, pi = model(x_norm)
    print(f"mean pi {pi.mean().item():.4f} mean theta {disp.mean().item():.4f}")
    os.makedirs(cfg["out_dir"], exist_ok=True)
    torch.save({"model": model.state_dict(), "latent": z}, os.path.join(cfg["out_dir"], "zinbae.pt"))
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
