"""python -m npid.train [--steps N] ..."""
import argparse
from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F

from .memory import MemoryBank
from .model import Encoder


@dataclass
class Config:
    n_data: int = 256
    n_classes: int = 8
    in_dim: int = 24
    hidden: int = 64
    feat_dim: int = 32
    batch_size: int = 32
    steps: int = 60
    lr: float = 0.1
    temperature: float = 0.1
    momentum: float = 0.5
    noise: float = 0.3
    seed: int = 0


def parse_config():
    p = argparse.ArgumentParser()
    for f in fields(Config):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    return Config(**vars(p.parse_args()))


def make_data(cfg):
    g = torch.Generator().manual_seed(cfg.seed)
    centers = torch.randn(cfg.n_classes, cfg.in_dim, generator=g) * 2.0
    labels = torch.arange(cfg.n_data) % cfg.n_classes
    x = centers[labels] + torch.randn(cfg.n_data, cfg.in_dim, generator=g)
    return x, labels


@torch.no_grad()
def knn_accuracy(memory, labels, k=5):
    sim = memory @ memory.t()
    sim.fill_diagonal_(-2.0)
    nn_idx = sim.topk(k, dim=1).indices
    votes = F.one_hot(labels[nn_idx], int(labels.max()) + 1).sum(1)
    return (votes.argmax(1) == labels).float().mean().item()


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    x, labels = make_data(cfg)
    encoder = Encoder(cfg.in_dim, cfg.hidden, cfg.feat_dim)
    bank = MemoryBank(cfg.n_data, cfg.feat_dim, cfg.temperature, cfg.momentum)
    opt = torch.optim.SGD(encoder.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=5e-4)

    g = torch.Generator().manual_seed(cfg.seed + 1)
    for step in range(1, cfg.steps + 1):
        idx = torch.randperm(cfg.n_data, generator=g)[: cfg.batch_size]
        xb = x[idx] + cfg.noise * torch.randn(cfg.batch_size, cfg.in_dim, generator=g)
        feats = encoder(xb)
        logits = bank(feats, idx)
        loss = F.cross_entropy(logits, idx)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step:3d} loss {loss.item():.4f} knn_acc {knn_accuracy(bank.memory, labels):.4f}")
    print(f"final knn_acc {knn_accuracy(bank.memory, labels):.4f} mem_norm {bank.memory.norm(dim=1).mean().item():.4f}")


if __name__ == "__main__":
    main()
