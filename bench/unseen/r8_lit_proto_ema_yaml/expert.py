"""Prototype classifier with EMA class prototypes, trained with PyTorch Lightning.
Hyperparameters in config.yaml next to this file. Run: python input.py [--max-epochs N]"""
import argparse
from pathlib import Path

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset


class BlobData(L.LightningDataModule):
    def __init__(self, n_train, n_val, in_dim, n_classes, noise, batch_size, seed):
        super().__init__()
        self.save_hyperparameters()

    def setup(self, stage=None):
        h = self.hparams
        centers = 2.0 * torch.randn(h.n_classes, h.in_dim, generator=torch.Generator().manual_seed(7))
        mix = torch.randn(h.in_dim, h.in_dim, generator=torch.Generator().manual_seed(8)) / h.in_dim ** 0.5

        def sample(n, seed):
            g = torch.Generator().manual_seed(seed)
            y = torch.randint(0, h.n_classes, (n,), generator=g)
            x = centers[y] + h.noise * torch.randn(n, h.in_dim, generator=g)
            return TensorDataset(torch.tanh(x @ mix), y)

        self.train_set, self.val_set = sample(h.n_train, 1), sample(h.n_val, 2)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.hparams.batch_size, shuffle=True,
                          generator=torch.Generator().manual_seed(self.hparams.seed))

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=256)


class EMAPrototypes(nn.Module):
    """Class prototypes kept as an exponential moving average of the class means of the
    normalised embeddings (not learned by gradient descent); logits = cosine / T."""

    def __init__(self, n_classes, dim, momentum, temperature):
        super().__init__()
        self.n_classes, self.m, self.t = n_classes, momentum, temperature
        self.register_buffer("protos", F.normalize(torch.randn(n_classes, dim), dim=1))

    def forward(self, z, labels=None):
        z = F.normalize(z, dim=1)
        if self.training and labels is not None:
            onehot = F.one_hot(labels, self.n_classes).float()
            counts = onehot.sum(0)
            batch_means = onehot.t() @ z.detach() / counts.clamp_min(1.0)[:, None]   # statistics, no gradient
            updated = F.normalize(self.m * self.protos + (1 - self.m) * batch_means, dim=1)
            self.protos = torch.where((counts > 0)[:, None], updated, self.protos)
        return z @ self.protos.t() / self.t


class ProtoNet(L.LightningModule):
    def __init__(self, in_dim, n_classes, hidden, emb_dim, momentum, temperature, lr):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, emb_dim))
        self.protos = EMAPrototypes(n_classes, emb_dim, momentum, temperature)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.protos(self.encoder(x), y), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.protos(self.encoder(x))
        self.log("val_acc", (logits.argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


class PrintMetrics(L.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        m = trainer.callback_metrics
        print(f"epoch {trainer.current_epoch} train_loss {m['train_loss']:.5f} val_acc {m['val_acc']:.4f}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default=str(Path(__file__).with_name("config.yaml")))
    p.add_argument("--max-epochs", type=int, default=None)
    args = p.parse_args()
    cfg = yaml.safe_load(Path(args.config).read_text())
    if args.max_epochs is not None:
        cfg["trainer"]["max_epochs"] = args.max_epochs

    L.seed_everything(cfg["seed"], verbose=False)
    data = BlobData(**cfg["data"], seed=cfg["seed"])
    model = ProtoNet(cfg["data"]["in_dim"], cfg["data"]["n_classes"], **cfg["model"], **cfg["optim"])
    trainer = L.Trainer(**cfg["trainer"], accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[PrintMetrics()])
    trainer.fit(model, datamodule=data)
    print(f"prototype sum {model.protos.protos.sum().item():.4f}")
    print(f"checksum {sum(q.abs().sum() for q in model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
