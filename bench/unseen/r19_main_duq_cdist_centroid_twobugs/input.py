"""Deterministic Uncertainty Quantification (van Amersfoort et al., 2020) on two moons.

RBF output layer with class centroids kept as an exponential moving average, trained with
BCE on the kernel values plus the two-sided gradient penalty on the inputs.
"""
import argparse
import dataclasses
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    epochs: int = 6
    batch_size: int = 24
    n_train: int = 480
    hidden: int = 64
    embedding_size: int = 16
    length_scale: float = 0.3
    gamma: float = 0.99
    l_gradient_penalty: float = 0.5
    lr: float = 0.01
    weight_decay: float = 1e-4
    noise: float = 0.1
    seed: int = 0


def parse_config() -> Config:
    parser = argparse.ArgumentParser(description="DUQ on two moons")
    for f in dataclasses.fields(Config):
        parser.add_argument("--" + f.name.replace("_", "-"), type=f.type, default=f.default)
    return Config(**vars(parser.parse_args()))


def make_moons(n, noise, gen):
    n_out = n // 2
    n_in = n - n_out
    t_out = torch.rand(n_out, generator=gen) * math.pi
    t_in = torch.rand(n_in, generator=gen) * math.pi
    outer = torch.stack([torch.cos(t_out), torch.sin(t_out)], 1)
    inner = torch.stack([1 - torch.cos(t_in), 1 - torch.sin(t_in) - 0.5], 1)
    x = torch.cat([outer, inner]) + noise * torch.randn(n, 2, generator=gen)
    y = torch.cat([torch.zeros(n_out, dtype=torch.long), torch.ones(n_in, dtype=torch.long)])
    return x, y


class DUQModel(nn.Module):
    def __init__(self, cfg: Config, num_classes: int = 2):
        super().__init__()
        self.gamma = cfg.gamma
        self.sigma = cfg.length_scale
        self.feature_extractor = nn.Sequential(
            nn.Linear(2, cfg.hidden), nn.ReLU(),
            nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU(),
        )
        self.W = nn.Linear(cfg.hidden, cfg.embedding_size, bias=False)
        self.register_buffer("N", torch.ones(num_classes) * 12)
        self.register_buffer("m", torch.normal(torch.zeros(num_classes, cfg.embedding_size), 0.05))
        self.m = self.m * self.N.unsqueeze(1)

    def embed(self, x):
        return self.W(self.feature_extractor(x))

    def centroids(self):
        return self.m / self.N.unsqueeze(1)

    def forward(self, x):
        z = self.embed(x)
        d = torch.cdist(z, self.centroids())                     # [B, C]
        return torch.exp(-(d ** 2) / (2 * z.size(1) * self.sigma ** 2))

    def update_embeddings(self, x, y_onehot):
        z = self.embed(x)
        self.N = self.gamma * self.N + (1 - self.gamma) * y_onehot.sum(0)
        features_sum = y_onehot.t() @ z
        self.m = self.gamma * self.m + (1 - self.gamma) * features_sum


def calc_gradient_penalty(x, y_pred):
    gradients = torch.autograd.grad(
        outputs=y_pred, inputs=x,
        grad_outputs=torch.ones_like(y_pred),
        create_graph=True,
    )[0]
    grad_norm = gradients.norm(2, dim=1)
    return ((grad_norm - 1) ** 2).mean()


def main(cfg: Config):
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    x_train, y_train = make_moons(cfg.n_train, cfg.noise, gen)
    x_test, y_test = make_moons(200, cfg.noise, gen)

    model = DUQModel(cfg)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9,
                                weight_decay=cfg.weight_decay)

    for epoch in range(1, cfg.epochs + 1):
        perm = torch.randperm(cfg.n_train, generator=gen)
        tot_bce = tot_gp = 0.0
        nb = 0
        model.train()
        for i in range(0, cfg.n_train, cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            x, y = x_train[idx], y_train[idx]
            y_onehot = F.one_hot(y, 2).float()

            x.requires_grad_(True)
            optimizer.zero_grad()
            y_pred = model(x)
            bce = F.binary_cross_entropy(y_pred, y_onehot)
            gp = calc_gradient_penalty(x, y_pred)
            loss = bce + cfg.l_gradient_penalty * gp
            loss.backward()
            optimizer.step()

            x.requires_grad_(False)
            model.update_embeddings(x, y_onehot)

            tot_bce += bce.item()
            tot_gp += gp.item()
            nb += 1

        model.eval()
        with torch.no_grad():
            kernel = model(x_test)
            acc = (kernel.argmax(1) == y_test).float().mean().item()
            certainty = kernel.max(1).values.mean().item()
        print(f"epoch {epoch}  bce {tot_bce / nb:.5f}  gp {tot_gp / nb:.5f}  "
              f"test_acc {acc:.5f}  certainty {certainty:.5f}")

    with torch.no_grad():
        c = model.centroids()
        far = model(torch.tensor([[4.0, 4.0], [-3.0, -3.0]])).max(1).values
    print(f"final  centroid_norm {c.norm().item():.5f}  far_certainty {far.mean().item():.5f}  "
          f"W_norm {model.W.weight.norm().item():.5f}")


if __name__ == "__main__":
    main(parse_config())
