from dataclasses import dataclass


@dataclass
class TrainConfig:
    seed: int = 0
    signal_len: int = 32
    n_train: int = 1024
    n_val: int = 256
    noise_std: float = 0.4
    width: int = 64
    n_blocks: int = 2
    lr: float = 2e-3
    batch_size: int = 64
    epochs: int = 5
