from dataclasses import dataclass


@dataclass
class TrainConfig:
    steps: int = 60
    batch_size: int = 32
    lr: float = 3e-3
    n_tokens: int = 8
    d_in: int = 12
    dim: int = 16
    aux_weight: float = 0.5
    log_every: int = 15
    seed: int = 0
