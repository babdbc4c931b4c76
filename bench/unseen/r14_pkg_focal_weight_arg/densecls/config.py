import argparse
from dataclasses import dataclass, fields


@dataclass
class TrainConfig:
    seed: int = 13
    n_train: int = 256
    n_val: int = 96
    image_size: int = 16
    max_objects: int = 3
    num_classes: int = 2
    width: int = 24
    prior_prob: float = 0.01
    focal_alpha: float = 0.25
    focal_gamma: float = 2.0
    lr: float = 0.003
    epochs: int = 8
    batch_size: int = 32

    @classmethod
    def from_args(cls, argv=None):
        parser = argparse.ArgumentParser(description="Dense centre-point classifier with sigmoid focal loss")
        for f in fields(cls):
            parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
        ns = parser.parse_args(argv)
        return cls(**vars(ns))
