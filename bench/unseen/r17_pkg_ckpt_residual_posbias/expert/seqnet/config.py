from dataclasses import dataclass


@dataclass
class Config:
    vocab: int = 20
    seq_len: int = 16
    dim: int = 32
    depth: int = 3
    batch_size: int = 32
    steps: int = 60
    lr: float = 3e-3
    grad_ckpt: bool = True   # recompute block activations in backward to save memory
    bf16: bool = True        # CPU autocast
    log_every: int = 15
    seed: int = 0
