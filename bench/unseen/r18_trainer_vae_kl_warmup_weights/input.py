"""Semi-supervised VAE with KL warm-up (Bowman et al. 2016) and a latent classifier.

The total loss is a weighted sum of reconstruction, KL and (on the labelled
subset) cross-entropy.  The weights live in a small `LossWeighter` module as a
buffer, so they move with the model and are saved in its state_dict; the KL
weight is ramped linearly from 0 to kl_max per optimisation step.
"""
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml


class Encoder(nn.Module):
    def __init__(self, dim, hidden, latent):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)

    def forward(self, x):
        h = self.net(x)
        return self.mu(h), self.logvar(h).clamp(-6, 4)


class SemiSupervisedVAE(nn.Module):
    def __init__(self, dim, hidden, latent, n_classes):
        super().__init__()
        self.encoder = Encoder(dim, hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ELU(), nn.Linear(hidden, dim))
        self.classifier = nn.Linear(latent, n_classes)

    def forward(self, x):
        mu, logvar = self.encoder(x)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.decoder(z), mu, logvar, self.classifier(mu)


class LossWeighter(nn.Module):
    """Weights for [recon, kl, cls]; the KL weight follows a linear warm-up."""

    def __init__(self, kl_warmup_steps, kl_max, cls_weight):
        super().__init__()
        self.kl_warmup_steps = kl_warmup_steps
        self.kl_max = kl_max
        self.register_buffer("weights", torch.tensor([1.0, 0.0, cls_weight]))
        self.register_buffer("num_steps", torch.zeros((), dtype=torch.long))

    def forward(self, losses):
        return (self.weights * torch.stack(losses)).sum()

    @torch.no_grad()
    def step(self):
        self.num_steps += 1
        frac = min(1.0, self.num_steps.item() / self.kl_warmup_steps)
        self.weights[1] = self.kl_max * frac


class VAETrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.weighter = LossWeighter(cfg["kl_warmup_steps"], cfg["kl_max"], cfg["cls_weight"])
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
        self.history = []

    def compute_losses(self, x, y, labelled):
        recon, mu, logvar, logits = self.model(x)
        rec = F.mse_loss(recon, x, reduction="none").sum(1).mean()
        kl = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)).mean()
        if labelled.any():
            cls = F.cross_entropy(logits[labelled], y[labelled])
        else:
            cls = logits.sum() * 0.0
        return rec, kl, cls

    def train_step(self, x, y, labelled):
        self.model.train()
        rec, kl, cls = self.compute_losses(x, y, labelled)
        loss = self.weighter([rec, kl, cls])
        self.weighter.step()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return torch.stack([rec, kl, cls, loss]).detach()

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        _, mu, _, logits = self.model(x)
        return (logits.argmax(1) == y).float().mean().item()

    def fit(self, data, g):
        x, y, labelled = data
        bs = self.cfg["batch_size"]
        for epoch in range(self.cfg["epochs"]):
            perm = torch.randperm(x.shape[0], generator=g)
            acc = torch.zeros(4)
            nb = 0
            for i in range(0, x.shape[0], bs):
                idx = perm[i:i + bs]
                acc += self.train_step(x[idx], y[idx], labelled[idx])
                nb += 1
            acc /= nb
            self.history.append(acc)
            if epoch % self.cfg["log_every"] == 0:
                print(f"epoch {epoch} rec {acc[0]:.5f} kl {acc[1]:.5f} cls {acc[2]:.5f} "
                      f"total {acc[3]:.5f} beta {self.weighter.weights[1].item():.5f} "
                      f"acc {self.evaluate(x, y):.5f}")


def make_data(cfg, g):
    n, d, k = cfg["n"], cfg["dim"], cfg["n_classes"]
    y = torch.randint(0, k, (n,), generator=g)
    basis = torch.randn(k, 3, d, generator=g) / 3 ** 0.5
    coeff = torch.randn(n, 3, generator=g)
    x = torch.einsum("nc,ncd->nd", coeff, basis[y]) + 0.8 * F.one_hot(y, k).float() @ torch.randn(k, d, generator=g)
    x = x + 0.1 * torch.randn(n, d, generator=g)
    labelled = torch.rand(n, generator=g) < cfg["labelled_fraction"]
    return x, y, labelled


def main():
    cfg = yaml.safe_load(Path(__file__).with_name("train.yaml").read_text())
    torch.manual_seed(cfg["seed"])
    g = torch.Generator().manual_seed(cfg["seed"])
    data = make_data(cfg["data"], g)
    model = SemiSupervisedVAE(cfg["data"]["dim"], cfg["model"]["hidden"], cfg["model"]["latent"],
                              cfg["data"]["n_classes"])
    trainer = VAETrainer(model, cfg["trainer"])
    trainer.fit(data, g)
    norms = {n: p.norm().item() for n, p in model.named_parameters() if n.endswith("weight")}
    print(f"final acc {trainer.evaluate(data[0], data[1]):.5f} "
          f"|W_logvar| {norms['encoder.logvar.weight']:.5f} |W_cls| {norms['classifier.weight']:.5f}")


if __name__ == "__main__":
    main()
