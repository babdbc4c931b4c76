"""Unsupervised domain adaptation with DANN (Ganin & Lempitsky 2015): a gradient reversal layer
between the bottleneck features and the domain classifier."""
import argparse
import json
import math
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.alpha, None


class DANN(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(cfg["in_dim"], cfg["hidden"]), nn.ReLU(),
                                      nn.Linear(cfg["hidden"], cfg["bottleneck"]))
        self.classifier = nn.Sequential(nn.ReLU(), nn.Linear(cfg["bottleneck"], cfg["num_classes"]))
        self.domain_classifier = nn.Sequential(nn.Linear(cfg["bottleneck"], 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x, alpha):
        feat = self.features(x)
        reverse_feat = GradReverse.apply(feat, alpha)
        class_logits = self.classifier(feat)
        domain_logits = self.domain_classifier(reverse_feat).squeeze(-1)
        return class_logits, domain_logits


def make_domains(cfg, g):
    centers = 2.0 * torch.randn(cfg["num_classes"], cfg["in_dim"], generator=g)
    def sample(n, shift):
        y = torch.randint(0, cfg["num_classes"], (n,), generator=g)
        x = centers[y] + torch.randn(n, cfg["in_dim"], generator=g)
        if shift:
            rot = torch.linalg.qr(torch.eye(cfg["in_dim"]) + 0.4 * torch.randn(cfg["in_dim"], cfg["in_dim"], generator=g))[0]
            x = x @ rot + shift
        return x, y
    return sample(cfg["n_per_domain"], 0.0), sample(cfg["n_per_domain"], cfg["shift"])


class DANNTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        self.model = DANN(cfg)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg["lr"])
        self.g = torch.Generator().manual_seed(cfg["seed"] + 1)
        (self.xs, self.ys), (self.xt, self.yt) = make_domains(cfg, self.g)

    def train_step(self, xs, ys, xt, alpha):
        self.model.train()
        x = torch.cat([xs, xt])
        domain = torch.cat([torch.zeros(len(xs)), torch.ones(len(xt))])
        class_logits, domain_logits = self.model(x, alpha)
        cls_loss = F.cross_entropy(class_logits[:len(xs)], ys)
        dom_loss = F.binary_cross_entropy_with_logits(domain_logits, domain)
        loss = cls_loss + self.cfg["domain_weight"] * dom_loss
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return cls_loss.item(), dom_loss.item()

    @torch.no_grad()
    def accuracy(self, x, y):
        self.model.eval()
        logits, _ = self.model(x, 0.0)
        return (logits.argmax(1) == y).float().mean().item()

    def fit(self):
        n, bs, epochs = len(self.xs), self.cfg["batch_size"], self.cfg["epochs"]
        steps_per_epoch = n // bs
        for epoch in range(epochs):
            ps = torch.randperm(n, generator=self.g)
            pt = torch.randperm(n, generator=self.g)
            tot_c = tot_d = 0.0
            for i in range(steps_per_epoch):
                p = (epoch * steps_per_epoch + i) / (epochs * steps_per_epoch)
                alpha = 2.0 / (1.0 + math.exp(-10 * p)) - 1.0
                idx_s, idx_t = ps[i * bs:(i + 1) * bs], pt[i * bs:(i + 1) * bs]
                c, d = self.train_step(self.xs[idx_s], self.ys[idx_s], self.xt[idx_t], alpha)
                tot_c += c
                tot_d += d
            print(f"epoch {epoch} cls {tot_c / steps_per_epoch:.5f} dom {tot_d / steps_per_epoch:.5f} "
                  f"src_acc {self.accuracy(self.xs, self.ys):.4f} tgt_acc {self.accuracy(self.xt, self.yt):.4f}")
        checksum = sum(p.detach().double().abs().sum().item() for p in self.model.features.parameters())
        print(f"feature checksum {checksum:.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(Path(__file__).resolve().parent / "dann.json"))
    with open(parser.parse_args().config) as f:
        cfg = json.load(f)
    DANNTrainer(cfg).fit()


if __name__ == "__main__":
    main()
