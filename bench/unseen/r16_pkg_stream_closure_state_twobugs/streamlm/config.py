import argparse
from dataclasses import dataclass, fields


@dataclass
class TrainConfig:
    seed: int = 0
    vocab: int = 12
    streams: int = 8
    length: int = 400
    bptt: int = 16
    emb: int = 16
    hidden: int = 32
    epochs: int = 1
    lr: float = 0.01
    wd: float = 0.01
    log_every: int = 8


def parse_args(argv=None) -> TrainConfig:
    p = argparse.ArgumentParser(description="streaming char-GRU")
    for f in fields(TrainConfig):
        p.add_argument(f"--{f.name.replace('_', '-')}", type=f.type if callable(f.type) else eval(f.type),
                       default=f.default)
    ns = p.parse_args(argv)
    return TrainConfig(**vars(ns))
