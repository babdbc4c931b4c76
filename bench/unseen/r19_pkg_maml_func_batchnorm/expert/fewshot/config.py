from dataclasses import dataclass


@dataclass
class MetaConfig:
    n_way: int = 5
    k_shot: int = 2
    k_query: int = 4
    num_classes_pool: int = 40
    image_size: int = 8
    channels: int = 16
    meta_iters: int = 24
    meta_batch: int = 4
    inner_steps: int = 2
    inner_lr: float = 0.1
    outer_lr: float = 2e-3
    test_tasks: int = 16
    log_every: int = 8
    seed: int = 0
