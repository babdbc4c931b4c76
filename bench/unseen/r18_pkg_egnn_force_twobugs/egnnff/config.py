import argparse
from dataclasses import asdict, dataclass, fields


@dataclass
class TrainConfig:
    n_mol: int = 96
    n_atoms: int = 6
    n_species: int = 2
    hidden: int = 32
    n_layers: int = 3
    batch_mols: int = 16
    epochs: int = 5
    lr: float = 2e-3
    energy_weight: float = 1.0
    force_weight: float = 10.0
    seed: int = 0


def get_config(argv=None) -> TrainConfig:
    parser = argparse.ArgumentParser("EGNN energy + force training")
    for f in fields(TrainConfig):
        parser.add_argument(f"--{f.name}", type=type(f.default), default=f.default)
    cfg = TrainConfig(**vars(parser.parse_args(argv)))
    return cfg


def describe(cfg: TrainConfig) -> str:
    return " ".join(f"{k}={v}" for k, v in asdict(cfg).items())
