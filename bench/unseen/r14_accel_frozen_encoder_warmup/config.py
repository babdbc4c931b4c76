from dataclasses import dataclass


@dataclass
class TrainConfig:
    seed: int = 5
    n_train: int = 384
    n_eval: int = 192
    signal_len: int = 64
    num_classes: int = 3
    channels: int = 16
    hidden: int = 32
    batch_size: int = 32
    grad_accum_steps: int = 2
    epochs: int = 5
    lr: float = 3e-3
    freeze_encoder_steps: int = 10
    feature_grad_mult: float = 0.1
