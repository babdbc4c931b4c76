"""Keyword-spotting toy: classify synthetic 'utterances' (chirps of different pitch) with a
wav2vec-style model.

    python input.py --epochs 6 --feature-grad-mult 0.1
"""
import argparse
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from modules import AudioClassifier


@dataclass
class TrainConfig:
    epochs: int = 6
    batch_size: int = 32
    lr: float = 0.1
    n_classes: int = 4
    feature_grad_mult: float = 0.1
    seed: int = 0


def make_utterances(n, n_classes, length, g):
    y = torch.randint(0, n_classes, (n,), generator=g)
    t = torch.linspace(0, 1, length)
    f0 = 3.0 + 2.0 * y.float()[:, None]
    phase = torch.rand(n, 1, generator=g) * 6.28
    wav = torch.sin(2 * 3.14159 * f0 * t * (1 + 0.5 * t) + phase)
    return wav + 0.8 * torch.randn(n, length, generator=g), y


class Trainer:
    def __init__(self, cfg: TrainConfig):
        self.cfg = cfg
        torch.manual_seed(cfg.seed)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.x, self.y = make_utterances(256, cfg.n_classes, 64, self.gen)
        self.xv, self.yv = make_utterances(128, cfg.n_classes, 64, self.gen)
        self.model = AudioClassifier(cfg.n_classes, feature_grad_mult=cfg.feature_grad_mult)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=cfg.lr, momentum=0.9)
        self.global_step = 0
        self.conv0_init = self.model.feature_extractor.convs[0].weight.detach().clone()

    def train_step(self, wav, y):
        self.model.train()
        loss = F.cross_entropy(self.model(wav), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.global_step += 1
        return loss.item()

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        return (self.model(self.xv).argmax(1) == self.yv).float().mean().item()

    def fit(self):
        for epoch in range(self.cfg.epochs):
            perm = torch.randperm(self.x.shape[0], generator=self.gen)
            losses = [self.train_step(self.x[idx], self.y[idx])
                      for idx in perm.split(self.cfg.batch_size)]
            print(f"epoch {epoch} loss {sum(losses) / len(losses):.4f} val_acc {self.validate():.4f}")
        conv_w = self.model.feature_extractor.convs[0].weight.detach()
        print(f"final val_acc {self.validate():.4f} conv0_change {(conv_w - self.conv0_init).norm().item():.4f}")


def main():
    p = argparse.ArgumentParser()
    for name, default in vars(TrainConfig()).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    Trainer(TrainConfig(**vars(p.parse_args()))).fit()


if __name__ == "__main__":
    main()
