import argparse
from dataclasses import dataclass, fields


@dataclass
class DPConfig:
    n_train: int = 1024
    n_val: int = 256
    in_dim: int = 10
    hidden: int = 32
    n_blocks: int = 2
    epochs: int = 3
    batch_size: int = 64
    lr: float = 0.5
    clip_norm: float = 1.0
    noise_multiplier: float = 0.8
    seed: int = 15


def parse_config(argv=None):
    parser = argparse.ArgumentParser(description="DP-SGD on synthetic tabular data")
    for f in fields(DPConfig):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return DPConfig(**vars(parser.parse_args(argv)))
