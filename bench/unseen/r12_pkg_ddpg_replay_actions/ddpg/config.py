import argparse
from dataclasses import dataclass, fields


@dataclass
class DDPGConfig:
    seed: int = 0
    episodes: int = 24
    max_steps: int = 40
    warmup_steps: int = 120
    batch_size: int = 64
    buffer_size: int = 10_000
    gamma: float = 0.97
    tau: float = 0.02
    actor_lr: float = 1e-3
    critic_lr: float = 2e-3
    hidden: int = 64
    expl_noise: float = 0.2

    @classmethod
    def from_args(cls, argv=None):
        p = argparse.ArgumentParser(description="DDPG on a 2-D point-mass reaching task")
        for f in fields(cls):
            p.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
        ns = p.parse_args(argv)
        return cls(**{f.name: getattr(ns, f.name) for f in fields(cls)})
