"""python -m charlm.train [--config path] [--epochs N]"""
import argparse
import json
from pathlib import Path

import torch

from .data import batchify, markov_stream, windows
from .model import LSTMLM
from .trainer import TBPTTTrainer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=str(Path(__file__).with_name("config.json")))
    p.add_argument("--epochs", type=int, default=None)
    args = p.parse_args()
    cfg = json.loads(Path(args.config).read_text())
    if args.epochs is not None:
        cfg["epochs"] = args.epochs

    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    stream = markov_stream(cfg["stream_len"], cfg["vocab"], gen)
    split = int(0.85 * stream.numel())
    train = batchify(stream[:split], cfg["n_streams"])
    val = batchify(stream[split:], 4)
    print(f"train {tuple(train.shape)} val {tuple(val.shape)} windows/epoch {(train.size(1) - 1 + cfg['bptt'] - 1) // cfg['bptt']}")
    model = LSTMLM(cfg["vocab"], cfg["emb"], cfg["hidden"], cfg["layers"])
    TBPTTTrainer(model, cfg).fit(train, val, windows)


if __name__ == "__main__":
    main()
