"""Semi-supervised tabular representation learning with a Trainer class.

The encoder is trained with (a) a Barlow Twins redundancy-reduction loss between
two corrupted views, (b) an InfoNCE term against a queue of past embeddings, and
(c) a supervised head on the labelled subset; a callback keeps an EMA copy of the
encoder and another one tracks a feature-gate importance score.

Run:  python input.py
"""
import copy
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class Config:
    n: int = 768
    features: int = 12
    classes: int = 3
    hidden: int = 48
    embed: int = 16
    queue: int = 128
    batch_size: int = 64
    epochs: int = 3
    lr: float = 2e-3
    lambd: float = 5e-3
    temperature: float = 0.2
    labelled_frac: float = 0.3
    seed: int = 0


# =========================================================================== data
def make_data(cfg):
    g = torch.Generator().manual_seed(cfg.seed)
    centers = torch.randn(cfg.classes, cfg.features, generator=g)
    y = torch.randint(0, cfg.classes, (cfg.n,), generator=g)
    x = centers[y] + 0.8 * torch.randn(cfg.n, cfg.features, generator=g)
    labelled = torch.rand(cfg.n, generator=g) < cfg.labelled_frac
    return x, y, labelled


def corrupt(x, gen, p=0.2):
    """Feature masking on a copy plus Gaussian jitter."""
    view = x.clone()
    view[torch.rand(x.shape, generator=gen) < p] = 0.0
    view += 0.05 * torch.randn(x.shape, generator=gen)
    return view


# =========================================================================== layers
class RangeObserver(nn.Module):
    def __init__(self, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("hi", torch.tensor(1.0))

    @torch.no_grad()
    def forward(self, x):
        self.hi.mul_(self.momentum).add_((1 - self.momentum) * x.detach().abs().max())
        return x


class FakeQuantLinear(nn.Linear):
    """8-bit per-channel fake-quantized weights (STE), scale from the live weights."""

    def forward(self, x):
        w = self.weight
        scale = w.abs().amax(dim=1, keepdim=True) / 127
        scale.clamp_(min=1e-8)
        q = w / scale
        q = q + (q.round() - q).detach()
        return F.linear(x, q.clamp(-127, 127) * scale, self.bias)


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc1 = FakeQuantLinear(cfg.features, cfg.hidden)
        self.obs = RangeObserver()
        self.fc2 = FakeQuantLinear(cfg.hidden, cfg.hidden)
        self.out = nn.Linear(cfg.hidden, cfg.embed)

    def forward(self, x, gate=None):
        h = self.fc1(x)
        h.relu_()
        h = self.obs(h)
        if gate is not None:
            h = h * gate
        h = F.gelu(self.fc2(h))
        return self.out(h)


class ResidualHead(nn.Module):
    """Two refinement stages with out-of-place residual updates."""

    def __init__(self, dim, classes):
        super().__init__()
        self.stages = nn.ModuleList(nn.Linear(dim, dim + classes) for _ in range(2))
        self.classes = classes

    def forward(self, z):
        residual = z
        logits = z.new_zeros(z.shape[0], self.classes)
        for stage in self.stages:
            back, part = stage(torch.tanh(residual)).split([z.shape[1], self.classes], dim=1)
            residual = residual - back
            logits += part
        return logits


# =========================================================================== losses
def off_diagonal(x):
    n, m = x.shape
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


def barlow_twins(z1, z2, lambd):
    z1 = (z1 - z1.mean(0)) / (z1.std(0) + 1e-5)
    z2 = (z2 - z2.mean(0)) / (z2.std(0) + 1e-5)
    c = z1.T @ z2
    c.div_(z1.shape[0])
    on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
    off_diag = off_diagonal(c).pow_(2).sum()
    return on_diag + lambd * off_diag


def queue_infonce(q, k, queue, temperature):
    q, k = F.normalize(q, dim=1), F.normalize(k, dim=1)
    pos = (q * k).sum(1, keepdim=True)
    neg = q @ F.normalize(queue, dim=1).T
    logits = torch.cat([pos, neg], 1) / temperature
    return F.cross_entropy(logits, torch.zeros(len(q), dtype=torch.long))


# =========================================================================== callbacks
class EMACallback:
    def __init__(self, tau=0.02):
        self.tau = tau

    def on_step_end(self, trainer):
        with torch.no_grad():
            for pt, p in zip(trainer.target.parameters(), trainer.encoder.parameters()):
                pt.lerp_(p, self.tau)


class GateImportanceCallback:
    def __init__(self):
        self.importance = None

    def on_loss(self, trainer, loss):
        (g,) = torch.autograd.grad(loss, trainer.gate, retain_graph=True)
        self.importance = g.abs() if self.importance is None else self.importance + g.abs()


# =========================================================================== trainer
class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.encoder = Encoder(cfg)
        self.head = ResidualHead(cfg.embed, cfg.classes)
        self.target = copy.deepcopy(self.encoder).requires_grad_(False)
        self.optimizer = torch.optim.AdamW(list(self.encoder.parameters()) + list(self.head.parameters()),
                                           lr=cfg.lr, weight_decay=1e-2)
        self.gate = torch.ones(cfg.hidden, requires_grad=True)
        self.queue = F.normalize(torch.randn(cfg.queue, cfg.embed), dim=1)
        self.ptr = 0
        self.gen = torch.Generator().manual_seed(cfg.seed + 5)
        self.ema_cb, self.gate_cb = EMACallback(), GateImportanceCallback()
        self.history = []

    def _enqueue(self, keys):
        with torch.no_grad():
            n = keys.shape[0]
            idx = (self.ptr + torch.arange(n)) % self.cfg.queue
            self.queue.index_copy_(0, idx, F.normalize(keys, dim=1))
            self.ptr = (self.ptr + n) % self.cfg.queue

    def step(self, x, y, labelled):
        v1, v2 = corrupt(x, self.gen), corrupt(x, self.gen)
        z1 = self.encoder(v1, self.gate)
        z2 = self.encoder(v2, self.gate)
        with torch.no_grad():
            k = self.target(v2)
        ssl = barlow_twins(z1, z2, self.cfg.lambd) + queue_infonce(z1, k, self.queue, self.cfg.temperature)
        logits = self.head(z1)
        sup = F.cross_entropy(logits[labelled], y[labelled]) if labelled.any() else z1.sum() * 0
        self.gate_cb.on_loss(self, ssl)
        self.optimizer.zero_grad()
        ssl.backward(retain_graph=True)
        sup.backward()
        self.optimizer.step()
        self._enqueue(k)
        self.ema_cb.on_step_end(self)
        return ssl.item(), sup.item()

    def fit(self, x, y, labelled):
        for epoch in range(self.cfg.epochs):
            perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
            ssl_sum = sup_sum = 0.0
            nb = 0
            for i in range(0, len(x), self.cfg.batch_size):
                idx = perm[i:i + self.cfg.batch_size]
                a, b = self.step(x[idx], y[idx], labelled[idx])
                ssl_sum, sup_sum, nb = ssl_sum + a, sup_sum + b, nb + 1
            acc = self.evaluate(x, y)
            print(f"epoch {epoch} ssl {ssl_sum / nb:.6f} sup {sup_sum / nb:.6f} acc {acc:.4f}")

    @torch.no_grad()
    def evaluate(self, x, y):
        logits = self.head(self.encoder(x, self.gate))
        return (logits.argmax(1) == y).float().mean().item()


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    x, y, labelled = make_data(cfg)
    trainer = Trainer(cfg)
    trainer.fit(x, y, labelled)
    imp = trainer.gate_cb.importance
    print(f"gate importance top3 {' '.join(f'{v:.6f}' for v in imp.topk(3).values.tolist())}")
    params = list(trainer.encoder.parameters()) + list(trainer.head.parameters())
    checksum = sum(p.double().sum().item() for p in params)
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
