"""Entry point: python -m probe.train [--epochs N]"""
import argparse
from pathlib import Path

import torch
import yaml

from .data import make_loaders
from .hooks import install
from .model import ProbeMLP
from .trainer import Trainer


def load_config(path=None):
    path = Path(path) if path else Path(__file__).with_name("defaults.yaml")
    with open(path) as f:
        return yaml.safe_load(f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=None)
    parser.add_argument("--epochs", type=int, default=None)
    args = parser.parse_args()
    cfg = load_config(args.config)
    if args.epochs is not None:
        cfg["optim"]["epochs"] = args.epochs

    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    train_loader, val_loader = make_loaders(cfg, cfg["seed"])
    d, m = cfg["data"], cfg["model"]
    model = ProbeMLP(d["n_features"], d["n_classes"], m["hidden"], m["depth"])
    _, tracker = install(model, cfg, cfg["seed"])
    trainer = Trainer(model, tracker, cfg)
    trainer.fit(train_loader, val_loader, cfg["optim"]["epochs"])
    norms = " ".join(f"{p.norm().item():.5f}" for p in (model.blocks[0].fc2.weight, model.head.weight))
    print(f"steps {trainer.global_step} weight norms {norms}")


if __name__ == "__main__":
    main()
