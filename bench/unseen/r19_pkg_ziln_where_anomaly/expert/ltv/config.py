from dataclasses import dataclass


@dataclass
class Config:
    n_customers: int = 1536
    n_features: int = 8
    hidden: int = 32
    batch_size: int = 128
    epochs: int = 5
    lr: float = 3e-3
    seed: int = 0
    # debugging switch: we had NaN losses on the full data set, keep anomaly mode on for now
    detect_anomaly: bool = True
