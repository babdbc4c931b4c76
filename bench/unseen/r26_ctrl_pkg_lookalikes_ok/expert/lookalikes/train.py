"""python -m lookalikes.train"""
import os

import torch
import yaml

from . import audio, render, seqmem, slots


def main():
    with open(os.path.join(os.path.dirname(__file__), "config.yaml")) as f:
        cfg = yaml.safe_load(f)
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    models = [render.run(cfg["render"], gen), audio.run(cfg["vocoder"], gen),
              slots.run(cfg["slots"], gen), seqmem.run(cfg["seqmem"], gen)]
    print(f"checksum {sum(p.sum().item() for m in models for p in m.parameters()):.6f}")


if __name__ == "__main__":
    main()
