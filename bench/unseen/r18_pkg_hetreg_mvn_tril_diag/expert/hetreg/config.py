from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass
class DataConfig:
    n_train: int = 1024
    n_val: int = 256
    in_dim: int = 4
    out_dim: int = 3


@dataclass
class ModelConfig:
    hidden: int = 64
    depth: int = 2
    min_std: float = 1e-2


@dataclass
class OptimConfig:
    lr: float = 1e-3
    weight_decay: float = 0.0
    epochs: int = 5
    batch_size: int = 128


@dataclass
class Config:
    seed: int = 0
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)


def load_config(path=None) -> Config:
    path = Path(path) if path else Path(__file__).with_name("config.yaml")
    raw = yaml.safe_load(path.read_text())
    return Config(
        seed=raw.get("seed", 0),
        data=DataConfig(**raw.get("data", {})),
        model=ModelConfig(**raw.get("model", {})),
        optim=OptimConfig(**raw.get("optim", {})),
    )
