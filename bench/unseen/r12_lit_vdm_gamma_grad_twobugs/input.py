"""Continuous-time Variational Diffusion Model (Kingma et al. 2021) on a 2-D toy density,
with a learned linear noise schedule gamma(t) = -log SNR(t), as a Lightning 2.x module.

The continuous-time diffusion loss needs d gamma / d t, taken with autograd.grad; the
validation loop reports the same variational bound (in nats per dimension).
"""
import logging
import math
from pathlib import Path

import lightning as L
import torch
import torch.nn as nn
import yaml
from torch.utils.data import DataLoader, TensorDataset


class LearnedLinearSchedule(nn.Module):
    def __init__(self, gamma_min, gamma_max):
        super().__init__()
        self.b = nn.Parameter(torch.tensor(gamma_min))
        self.w = nn.Parameter(torch.tensor(gamma_max - gamma_min))

    def forward(self, t):
        return self.b + self.w.abs() * t


class ScoreNet(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2 + 16, hidden), nn.SiLU(), nn.Linear(hidden, hidden),
                                 nn.SiLU(), nn.Linear(hidden, 2))
        self.register_buffer("freqs", torch.exp(torch.linspace(0, math.log(100.0), 8)))

    def forward(self, z, gamma_t):
        g = (gamma_t.unsqueeze(-1) / 12.0) * self.freqs
        return self.net(torch.cat([z, torch.sin(g), torch.cos(g)], dim=-1))


class LitVDM(L.LightningModule):
    def __init__(self, hidden, gamma_min, gamma_max, lr):
        super().__init__()
        self.save_hyperparameters()
        self.gamma = LearnedLinearSchedule(gamma_min, gamma_max)
        self.model = ScoreNet(hidden)
        self.val_sums = []

    def vlb_terms(self, x):
        b = x.size(0)
        times = torch.rand(b, device=x.device)
        with torch.enable_grad():        # d gamma / d t is needed even when evaluating
            gamma_t = self.gamma(times)
        noise = torch.randn_like(x)
        alpha_t = torch.sigmoid(-gamma_t).sqrt().unsqueeze(-1)
        sigma_t = torch.sigmoid(gamma_t).sqrt().unsqueeze(-1)
        z_t = alpha_t * x + sigma_t * noise
        eps_hat = self.model(z_t, gamma_t)
        gamma_grad = torch.autograd.grad(gamma_t, times, grad_outputs=torch.ones_like(gamma_t),
                                         create_graph=True, retain_graph=True)[0]
        diffusion = 0.5 * gamma_grad * ((eps_hat - noise) ** 2).sum(-1)
        gamma_1 = self.gamma(torch.ones(1, device=x.device))
        sigma1_sq = torch.sigmoid(gamma_1)
        latent = 0.5 * (sigma1_sq + (1 - sigma1_sq) * x ** 2 - torch.log(sigma1_sq) - 1).sum(-1)
        gamma_0 = self.gamma(torch.zeros(1, device=x.device))
        recon = 0.5 * (gamma_0 + math.log(2 * math.pi)).expand(b) * x.size(1) + 0.5 * torch.exp(gamma_0)
        return diffusion, latent, recon

    def training_step(self, batch, batch_idx):
        (x,) = batch
        diffusion, latent, recon = self.vlb_terms(x)
        loss = (diffusion + latent + recon).mean() / x.size(1)
        return loss

    def _accumulate(self, x):
        diffusion, latent, recon = self.vlb_terms(x)
        self.val_sums.append(torch.stack([diffusion.sum(), latent.sum(), recon.sum(),
                                          torch.tensor(float(x.size(0)))]).detach())

    def _report(self, name):
        d, l, r, n = torch.stack(self.val_sums).sum(0)
        self.val_sums.clear()
        g0, g1 = self.gamma(torch.tensor([0.0, 1.0])).tolist()
        print(f"{name} nats_per_dim {((d + l + r) / n / 2).item():.5f} "
              f"diff {(d / n).item():.5f} latent {(l / n).item():.5f} recon {(r / n).item():.5f} "
              f"gamma0 {g0:.4f} gamma1 {g1:.4f}")

    def validation_step(self, batch, batch_idx):
        self._accumulate(batch[0])

    def on_validation_epoch_end(self):
        self._report(f"epoch {self.current_epoch} val")

    def test_step(self, batch, batch_idx):
        self._accumulate(batch[0])

    def on_test_epoch_end(self):
        self._report("test")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def ring_of_gaussians(n, seed):
    g = torch.Generator().manual_seed(seed)
    k = torch.randint(0, 8, (n,), generator=g).float()
    centers = torch.stack([torch.cos(k * math.pi / 4), torch.sin(k * math.pi / 4)], 1)
    return 0.8 * centers + 0.08 * torch.randn(n, 2, generator=g)


def main():
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    cfg = yaml.safe_load(Path(__file__).with_name("vdm.yaml").read_text())
    L.seed_everything(cfg["seed"], verbose=False)
    dcfg = cfg["data"]
    train = DataLoader(TensorDataset(ring_of_gaussians(dcfg["n_train"], 1)),
                       batch_size=dcfg["batch_size"], shuffle=True)
    val = DataLoader(TensorDataset(ring_of_gaussians(dcfg["n_val"], 2)), batch_size=dcfg["batch_size"])
    test = DataLoader(TensorDataset(ring_of_gaussians(dcfg["n_val"], 3)), batch_size=dcfg["batch_size"])
    model = LitVDM(**cfg["model"])
    trainer = L.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False,
                        deterministic=True, **cfg["trainer"])
    trainer.fit(model, train, val)
    L.seed_everything(cfg["seed"] + 1, verbose=False)   # fixed t/noise draws for the final bound
    trainer.test(model, test, verbose=False)


if __name__ == "__main__":
    main()
