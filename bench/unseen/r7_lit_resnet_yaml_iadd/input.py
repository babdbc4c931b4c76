"""Small ResNet on synthetic bar images, PyTorch Lightning, hyperparameters from config.yaml.
Run: python input.py [--config config.yaml]"""
import argparse
import warnings
from pathlib import Path

import torch
import yaml
import lightning.pytorch as pl

from datamodule import BarsDataModule
from lit import LitBars

warnings.filterwarnings("ignore")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(Path(__file__).resolve().parent / "config.yaml"))
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    pl.seed_everything(cfg["seed"], verbose=False)
    dm = BarsDataModule(**cfg["data"])
    model = LitBars(**cfg["model"], **cfg["optim"])
    trainer = pl.Trainer(
        max_epochs=cfg["trainer"]["max_epochs"],
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, datamodule=dm)
    for epoch, (loss, acc) in enumerate(model.val_history):
        print(f"epoch {epoch} val_loss {loss:.4f} val_acc {acc:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
