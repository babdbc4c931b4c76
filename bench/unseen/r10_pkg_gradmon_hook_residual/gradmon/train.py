"""python -m gradmon.train [--config path] [--epochs N]"""
import argparse
from pathlib import Path

import torch
import yaml

from .data import shells
from .model import ResMLP
from .trainer import Trainer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=str(Path(__file__).with_name("config.yaml")))
    p.add_argument("--epochs", type=int, default=None)
    args = p.parse_args()
    cfg = yaml.safe_load(Path(args.config).read_text())
    if args.epochs is not None:
        cfg["train"]["epochs"] = args.epochs

    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    d = cfg["data"]
    train = shells(d["n_train"], d["dim"], d["classes"], gen)
    val = shells(d["n_val"], d["dim"], d["classes"], gen)
    model = ResMLP(d["dim"], cfg["model"]["width"], cfg["model"]["blocks"], d["classes"])
    print(f"ResMLP with {sum(p.numel() for p in model.parameters())} parameters, "
          f"monitoring {cfg['model']['blocks']} x '{cfg['monitor']['modules']}'")
    Trainer(model, cfg).fit(train, val, gen)


if __name__ == "__main__":
    main()
