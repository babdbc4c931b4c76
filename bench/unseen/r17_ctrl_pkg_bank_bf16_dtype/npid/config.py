from dataclasses import dataclass


@dataclass
class Config:
    n_samples: int = 256
    d_in: int = 24
    dim: int = 16
    batch_size: int = 32
    epochs: int = 3
    lr: float = 0.03
    temperature: float = 0.1
    bank_momentum: float = 0.5
    bf16: bool = True
    seed: int = 0
