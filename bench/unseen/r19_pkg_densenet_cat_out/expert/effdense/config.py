from dataclasses import dataclass


@dataclass
class TrainConfig:
    epochs: int = 4
    batch_size: int = 32
    n_train: int = 256
    n_val: int = 96
    image_size: int = 12
    num_classes: int = 4
    growth_rate: int = 6
    block_config: tuple = (3, 3)
    num_init_features: int = 12
    bn_size: int = 2
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 1e-4
    seed: int = 0
