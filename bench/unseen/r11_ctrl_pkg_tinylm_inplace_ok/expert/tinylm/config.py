import argparse
from dataclasses import dataclass, fields


@dataclass
class Config:
    seed: int = 0
    vocab_size: int = 20
    dim: int = 32
    heads: int = 4
    layers: int = 2
    max_len: int = 40
    prompt_len: int = 4
    seq_len: int = 24
    batch_size: int = 32
    steps: int = 80
    lr: float = 3e-3
    ema_decay: float = 0.9
    z_loss_weight: float = 1e-3
    log_every: int = 20


def parse_config() -> Config:
    parser = argparse.ArgumentParser()
    for f in fields(Config):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Config(**vars(parser.parse_args()))
