import argparse
from dataclasses import dataclass, fields


@dataclass
class TrainConfig:
    vocab: int = 12
    seq_len: int = 12
    d_model: int = 32
    n_heads: int = 2
    n_layers: int = 2
    attn_dropout: float = 0.1
    z_loss: float = 1e-3
    batch_size: int = 32
    steps: int = 90
    lr: float = 2e-3
    log_every: int = 30
    seed: int = 3


def parse_config(argv=None):
    parser = argparse.ArgumentParser(description="train fastattn on a synthetic majority task")
    for f in fields(TrainConfig):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return TrainConfig(**vars(parser.parse_args(argv)))
