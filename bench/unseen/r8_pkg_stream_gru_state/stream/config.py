import argparse
from dataclasses import dataclass, fields


@dataclass
class TrainConfig:
    epochs: int = 4
    window: int = 12
    n_streams: int = 8
    stream_len: int = 240
    hidden: int = 24
    lr: float = 5e-3
    huber_delta: float = 0.5
    seed: int = 0


def parse_config(argv=None):
    p = argparse.ArgumentParser(description="stateful GRU forecaster")
    for f in fields(TrainConfig):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    return TrainConfig(**vars(p.parse_args(argv)))
