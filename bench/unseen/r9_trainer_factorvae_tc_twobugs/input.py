"""FactorVAE (Kim & Mnih 2018) on synthetic factorised data.

The total-correlation term is estimated by a discriminator that tells samples of q(z)
from samples of prod_j q(z_j) (latent dimensions shuffled independently across the batch).
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    def __init__(self, x_dim, latent_dim, hidden):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(x_dim, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent_dim))
        self.dec = nn.Sequential(nn.Linear(latent_dim, hidden), nn.ReLU(), nn.Linear(hidden, x_dim))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar, z


class Discriminator(nn.Module):
    def __init__(self, latent_dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 2))

    def forward(self, z):
        return self.net(z)


def permute_dims(z):
    """Shuffle every latent dimension independently across the batch (in place, saves a copy)."""
    batch, dim = z.shape
    for j in range(dim):
        z[:, j] = z[torch.randperm(batch), j]
    return z


def kl_normal(mu, logvar):
    return (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp())).sum(1).mean()


class FactorVAETrainer:
    def __init__(self, vae, disc, cfg):
        self.vae, self.disc = vae, disc
        self.gamma = cfg["loss"]["gamma"]
        self.opt_vae = torch.optim.Adam(vae.parameters(), lr=cfg["optim"]["lr_vae"])
        self.opt_d = torch.optim.Adam(disc.parameters(), lr=cfg["optim"]["lr_disc"], betas=(0.5, 0.9))

    def train_step(self, x):
        self.vae.train()
        self.disc.train()
        recon, mu, logvar, z = self.vae(x)
        z1, z2 = z.chunk(2, dim=0)
        d_z = self.disc(z1)
        z_perm = permute_dims(z2.detach())   # D must not push gradients into the encoder
        d_z_perm = self.disc(z_perm)

        rec = F.mse_loss(recon, x, reduction="sum") / x.size(0)
        kl = kl_normal(mu, logvar)
        tc = (d_z[:, 0] - d_z[:, 1]).mean()
        vae_loss = rec + kl + self.gamma * tc
        self.opt_vae.zero_grad()
        vae_loss.backward(retain_graph=True)
        self.opt_vae.step()

        zeros = torch.zeros(d_z.size(0), dtype=torch.long)
        ones = torch.ones(d_z_perm.size(0), dtype=torch.long)
        d_tc_loss = 0.5 * (F.cross_entropy(d_z, zeros) + F.cross_entropy(d_z_perm, ones))
        self.opt_d.zero_grad()
        d_tc_loss.backward()
        self.opt_d.step()
        return rec.item(), kl.item(), tc.item(), d_tc_loss.item()

    @torch.no_grad()
    def evaluate(self, loader):
        self.vae.eval()
        tot, rec, kl = 0, 0.0, 0.0
        for (x,) in loader:
            recon, mu, logvar, _ = self.vae(x)
            rec += F.mse_loss(recon, x, reduction="sum").item()
            kl += kl_normal(mu, logvar).item() * x.size(0)
            tot += x.size(0)
        return rec / tot, kl / tot

    def fit(self, train_loader, val_loader, epochs):
        for epoch in range(epochs):
            stats = torch.zeros(4)
            for i, (x,) in enumerate(train_loader):
                stats += torch.tensor(self.train_step(x))
            stats /= i + 1
            v_rec, v_kl = self.evaluate(val_loader)
            print(f"epoch {epoch} rec {stats[0]:.5f} kl {stats[1]:.5f} tc {stats[2]:.5f} "
                  f"d_loss {stats[3]:.5f} | val rec {v_rec:.5f} kl {v_kl:.5f}")


def make_data(cfg, seed):
    d = cfg["data"]
    g = torch.Generator().manual_seed(seed)
    n = d["n_train"] + d["n_val"]
    factors = torch.rand(n, d["n_factors"], generator=g) * 2 - 1
    mix = torch.randn(d["n_factors"], d["x_dim"], generator=g)
    x = torch.tanh(factors @ mix) + 0.05 * torch.randn(n, d["x_dim"], generator=g)
    train = DataLoader(TensorDataset(x[: d["n_train"]]), batch_size=d["batch_size"], shuffle=True,
                       drop_last=True, generator=g)
    val = DataLoader(TensorDataset(x[d["n_train"]:]), batch_size=d["batch_size"])
    return train, val


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="factorvae.json")
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    train_loader, val_loader = make_data(cfg, cfg["seed"])
    m = cfg["model"]
    vae = VAE(cfg["data"]["x_dim"], m["latent_dim"], m["hidden"])
    disc = Discriminator(m["latent_dim"], m["disc_hidden"])
    trainer = FactorVAETrainer(vae, disc, cfg)
    trainer.fit(train_loader, val_loader, cfg["optim"]["epochs"])
    print(f"decoder norm {sum(p.norm() ** 2 for p in vae.dec.parameters()).sqrt().item():.5f} "
          f"disc norm {sum(p.norm() ** 2 for p in disc.parameters()).sqrt().item():.5f}")


if __name__ == "__main__":
    main()
