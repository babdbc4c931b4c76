"""SimCLR-style contrastive pre-training with a small Trainer class and an
online linear-probe callback that measures representation quality after every
epoch (the encoder is frozen for the probe; only the probe is trained).
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TrainConfig:
    in_dim: int = 16
    feat_dim: int = 32
    proj_dim: int = 16
    n_classes: int = 4
    batch: int = 64
    epochs: int = 6
    lr: float = 3e-3
    tau: float = 0.5
    noise: float = 0.3
    drop: float = 0.2
    probe_steps: int = 25
    probe_lr: float = 0.5
    seed: int = 0


class SimCLRModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(cfg.in_dim, 64), nn.ReLU(), nn.Linear(64, cfg.feat_dim))
        self.projector = nn.Sequential(nn.Linear(cfg.feat_dim, cfg.feat_dim), nn.ReLU(),
                                       nn.Linear(cfg.feat_dim, cfg.proj_dim))

    def forward(self, x):
        return self.projector(self.encoder(x))


class Callback:
    def on_epoch_end(self, trainer, epoch):
        pass


class LinearProbe(Callback):
    """Fit a linear classifier on frozen encoder features of a small labelled set."""

    def __init__(self, x, y, cfg):
        self.x, self.y = x, y
        self.steps = cfg.probe_steps
        self.probe = nn.Linear(cfg.feat_dim, cfg.n_classes)
        self.opt = torch.optim.SGD(self.probe.parameters(), lr=cfg.probe_lr)

    def on_epoch_end(self, trainer, epoch):
        with torch.no_grad():
            feats = trainer.model.encoder(self.x)
        for _ in range(self.steps):
            self.opt.zero_grad()
            loss = F.cross_entropy(self.probe(feats), self.y)
            loss.backward()
            self.opt.step()
        with torch.no_grad():
            acc = (self.probe(feats).argmax(1) == self.y).float().mean().item()
        trainer.history["probe_loss"].append(loss.item())
        trainer.history["probe_acc"].append(acc)


class Trainer:
    def __init__(self, model, cfg, callbacks=()):
        self.model = model
        self.cfg = cfg
        self.callbacks = list(callbacks)
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        self.gen = torch.Generator().manual_seed(cfg.seed + 10)
        self.history = {"loss": [], "probe_loss": [], "probe_acc": []}

    def augment(self, x):
        noise = self.cfg.noise * torch.randn(x.shape, generator=self.gen)
        keep = (torch.rand(x.shape, generator=self.gen) > self.cfg.drop).float()
        return (x + noise) * keep

    def nt_xent(self, z1, z2):
        n = z1.shape[0]
        z = F.normalize(torch.cat([z1, z2]), dim=1)
        sim = torch.exp(z @ z.t() / self.cfg.tau)
        self_mask = torch.eye(2 * n, dtype=torch.bool)
        sim = sim.masked_fill(self_mask, 0.0)
        pos = torch.cat([torch.diagonal(sim, n), torch.diagonal(sim, -n)])
        return -torch.log(pos / sim.sum(dim=1)).mean()

    def train_step(self, x):
        z1 = self.model(self.augment(x))
        z2 = self.model(self.augment(x))
        loss = self.nt_xent(z1, z2)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.item()

    def fit(self, data):
        for epoch in range(self.cfg.epochs):
            perm = torch.randperm(data.shape[0], generator=self.gen)
            losses = []
            for i in range(0, data.shape[0], self.cfg.batch):
                losses.append(self.train_step(data[perm[i:i + self.cfg.batch]]))
            self.history["loss"].append(sum(losses) / len(losses))
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
        return self.history


def make_data(cfg, n, gen):
    centers = 0.6 * torch.randn(cfg.n_classes, cfg.in_dim, generator=gen)
    y = torch.randint(0, cfg.n_classes, (n,), generator=gen)
    x = centers[y] + torch.randn(n, cfg.in_dim, generator=gen)
    return x, y


def main():
    cfg = TrainConfig()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    unlabeled, _ = make_data(cfg, 256, gen)
    x_lab, y_lab = make_data(cfg, 64, gen)

    model = SimCLRModel(cfg)
    trainer = Trainer(model, cfg, callbacks=[LinearProbe(x_lab, y_lab, cfg)])
    hist = trainer.fit(unlabeled)

    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print("epoch_losses", " ".join(f"{v:.6f}" for v in hist["loss"]))
    print("probe_acc", " ".join(f"{v:.4f}" for v in hist["probe_acc"]))
    print(f"final_contrastive_loss {hist['loss'][-1]:.6f}")
    print(f"final_probe_loss {hist['probe_loss'][-1]:.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
