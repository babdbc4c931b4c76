from dataclasses import dataclass, field


@dataclass
class PromptConfig:
    vocab: int = 20
    seq_len: int = 8
    d_model: int = 16
    n_heads: int = 2
    ff: int = 32
    layers: int = 2
    n_prompt: int = 4
    tasks: tuple = ("has3", "parity5")
    classes: int = 2
    lr: float = 0.05
    steps: int = 40
    batch: int = 32
    seed: int = 0
