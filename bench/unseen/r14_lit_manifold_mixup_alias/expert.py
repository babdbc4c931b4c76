import os
import warnings

import lightning as L
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))


def make_data(n, dim, classes, noise, gen):
    centers = torch.randn(classes, dim, generator=gen) * 2.0
    y = torch.randint(0, classes, (n,), generator=gen)
    x = centers[y] + noise * torch.randn(n, dim, generator=gen)
    x = torch.tanh(x) + 0.1 * x ** 2
    return x, y


def mixup_(h, lam, index):
    return lam * h + (1.0 - lam) * h[index]


class ManifoldMixupMLP(L.LightningModule):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        dims = [cfg["data"]["dim"]] + cfg["model"]["hidden"]
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(a, b), nn.ReLU()) for a, b in zip(dims[:-1], dims[1:]))
        self.head = nn.Linear(dims[-1], cfg["data"]["classes"])
        self.rng = np.random.RandomState(cfg["seed"])

    def forward(self, x, mix=None):
        layer, lam, index = mix if mix is not None else (-1, 1.0, None)
        h = x
        if layer == 0:
            h = mixup_(h, lam, index)
        for i, block in enumerate(self.blocks):
            h = block(h)
            if layer == i + 1:
                h = mixup_(h, lam, index)
        return self.head(h)

    def training_step(self, batch, batch_idx):
        x, y = batch
        lam = float(self.rng.beta(self.cfg["mixup"]["alpha"], self.cfg["mixup"]["alpha"]))
        layer = int(self.rng.choice(self.cfg["mixup"]["layers"]))
        index = torch.from_numpy(self.rng.permutation(x.size(0)))
        logits = self(x, mix=(layer, lam, index))
        loss = lam * F.cross_entropy(logits, y) + (1.0 - lam) * F.cross_entropy(logits, y[index])
        self.epoch_losses.append(loss.item())
        return loss

    def on_train_epoch_start(self):
        self.epoch_losses = []

    def on_train_epoch_end(self):
        if (self.current_epoch + 1) % 2 == 0:
            print(f"epoch {self.current_epoch + 1} mixup_loss {np.mean(self.epoch_losses):.4f}")

    def configure_optimizers(self):
        o = self.cfg["optim"]
        return torch.optim.AdamW(self.parameters(), lr=o["lr"], weight_decay=o["weight_decay"])


def main():
    with open(os.path.join(HERE, "config.yaml")) as f:
        cfg = yaml.safe_load(f)
    L.seed_everything(cfg["seed"], verbose=False)
    gen = torch.Generator().manual_seed(cfg["seed"])
    d = cfg["data"]
    x_all, y_all = make_data(d["n_train"] + d["n_val"], d["dim"], d["classes"], d["noise"], gen)
    x_tr, y_tr = x_all[:d["n_train"]], y_all[:d["n_train"]]
    x_va, y_va = x_all[d["n_train"]:], y_all[d["n_train"]:]
    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=cfg["trainer"]["batch_size"],
                        shuffle=True, generator=torch.Generator().manual_seed(cfg["seed"]))

    model = ManifoldMixupMLP(cfg)
    trainer = L.Trainer(max_epochs=cfg["trainer"]["max_epochs"], accelerator="cpu", devices=1,
                        enable_progress_bar=False, logger=False, enable_checkpointing=False,
                        enable_model_summary=False, deterministic=True)
    trainer.fit(model, loader)

    model.eval()
    with torch.no_grad():
        logits = model(x_va)
        val_loss = F.cross_entropy(logits, y_va).item()
        val_acc = (logits.argmax(-1) == y_va).float().mean().item()
    checksum = sum(p.abs().sum().item() for p in model.parameters())
    print(f"val_loss {val_loss:.4f} val_acc {val_acc:.4f} param_checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
