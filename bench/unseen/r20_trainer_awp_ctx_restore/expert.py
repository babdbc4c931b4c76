"""Classifier training with Adversarial Weight Perturbation (AWP, Wu et al. 2020),
as popularised by Kaggle NLP solutions.  The AWP helper was refactored from the
usual save/attack/restore calls into a context manager.
"""
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    in_dim: int = 20
    hidden: int = 64
    n_classes: int = 5
    batch: int = 32
    epochs: int = 5
    lr: float = 2e-3
    awp_start: int = 1          # AWP kicks in after the first epoch
    adv_lr: float = 0.5
    adv_eps: float = 0.05
    adv_param: str = "weight"
    seed: int = 0


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(cfg.in_dim, cfg.hidden), nn.GELU(),
            nn.Linear(cfg.hidden, cfg.hidden), nn.GELU(),
            nn.Linear(cfg.hidden, cfg.n_classes),
        )

    def forward(self, x):
        return self.net(x)


class AWP:
    def __init__(self, model, adv_param="weight", adv_lr=1.0, adv_eps=0.01):
        self.model = model
        self.adv_param = adv_param
        self.adv_lr = adv_lr
        self.adv_eps = adv_eps
        self.backup, self.backup_eps = {}, {}

    def _params(self):
        for name, p in self.model.named_parameters():
            if p.requires_grad and p.grad is not None and self.adv_param in name:
                yield name, p

    @torch.no_grad()
    def _save(self):
        for name, p in self._params():
            self.backup[name] = p.detach().clone()
            delta = self.adv_eps * p.detach().abs()
            self.backup_eps[name] = (self.backup[name] - delta, self.backup[name] + delta)

    @torch.no_grad()
    def _attack_step(self):
        e = 1e-6
        for name, p in self._params():
            norm_g = torch.norm(p.grad)
            norm_p = torch.norm(p)
            if norm_g != 0 and not torch.isnan(norm_g):
                p.add_(self.adv_lr * p.grad / (norm_g + e) * (norm_p + e))
                lo, hi = self.backup_eps[name]
                p.copy_(torch.min(torch.max(p, lo), hi))

    @torch.no_grad()
    def _restore(self):
        for name, p in self.model.named_parameters():
            if name in self.backup:
                p.copy_(self.backup[name])
        self.backup, self.backup_eps = {}, {}

    @contextmanager
    def perturbed(self):
        self._save()
        self._attack_step()
        try:
            yield
        finally:
            self._restore()


class Callback:
    def on_epoch_end(self, trainer, epoch):
        pass


class ValAccuracy(Callback):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def on_epoch_end(self, trainer, epoch):
        trainer.model.eval()
        with torch.no_grad():
            logits = trainer.model(self.x)
            trainer.history["val_acc"].append((logits.argmax(1) == self.y).float().mean().item())
            trainer.history["val_loss"].append(F.cross_entropy(logits, self.y).item())
        trainer.model.train()


class Trainer:
    def __init__(self, model, cfg, callbacks=()):
        self.model = model
        self.cfg = cfg
        self.callbacks = list(callbacks)
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.awp = AWP(model, cfg.adv_param, cfg.adv_lr, cfg.adv_eps)
        self.gen = torch.Generator().manual_seed(cfg.seed + 7)
        self.history = {"train_loss": [], "adv_loss": [], "val_acc": [], "val_loss": []}

    def loss_fn(self, logits, y):
        return F.cross_entropy(logits, y, label_smoothing=0.05)

    def train_step(self, x, y, epoch):
        self.opt.zero_grad()
        loss = self.loss_fn(self.model(x), y)
        loss.backward()
        adv_value = 0.0
        if epoch >= self.cfg.awp_start:
            with self.awp.perturbed():
                adv_loss = self.loss_fn(self.model(x), y)
                adv_loss.backward()
            adv_value = adv_loss.item()
        self.opt.step()
        return loss.item(), adv_value

    def fit(self, x, y):
        n = x.shape[0]
        for epoch in range(self.cfg.epochs):
            perm = torch.randperm(n, generator=self.gen)
            tot, adv, steps = 0.0, 0.0, 0
            for i in range(0, n, self.cfg.batch):
                idx = perm[i:i + self.cfg.batch]
                l, a = self.train_step(x[idx], y[idx], epoch)
                tot, adv, steps = tot + l, adv + a, steps + 1
            self.history["train_loss"].append(tot / steps)
            self.history["adv_loss"].append(adv / steps)
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
        return self.history


def make_data(cfg, n, gen):
    w = torch.randn(cfg.in_dim, cfg.n_classes, generator=gen)
    x = torch.randn(n, cfg.in_dim, generator=gen)
    y = (x @ w + 0.5 * torch.randn(n, cfg.n_classes, generator=gen)).argmax(1)
    return x, y


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    x, y = make_data(cfg, 512, gen)
    x_tr, y_tr, x_va, y_va = x[:384], y[:384], x[384:], y[384:]

    model = MLP(cfg)
    trainer = Trainer(model, cfg, callbacks=[ValAccuracy(x_va, y_va)])
    hist = trainer.fit(x_tr, y_tr)

    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print("train_loss", " ".join(f"{v:.6f}" for v in hist["train_loss"]))
    print("adv_loss", " ".join(f"{v:.6f}" for v in hist["adv_loss"]))
    print("val_acc", " ".join(f"{v:.4f}" for v in hist["val_acc"]))
    print(f"final_val_loss {hist['val_loss'][-1]:.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
