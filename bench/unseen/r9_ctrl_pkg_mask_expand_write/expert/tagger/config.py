from dataclasses import dataclass


@dataclass
class TaggerConfig:
    vocab: int = 40
    n_tags: int = 5
    d_model: int = 32
    n_heads: int = 4
    max_len: int = 20
    min_len: int = 6
    causal: bool = True          # streaming: a token only attends to its left context
    n_train: int = 320
    n_val: int = 96
    batch_size: int = 32
    epochs: int = 4
    lr: float = 3e-3
    seed: int = 9
