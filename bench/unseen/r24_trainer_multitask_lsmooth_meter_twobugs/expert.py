"""Multi-task tabular model (partly labelled classification + regression) trained by a small
Trainer with callbacks.  Task losses are balanced by normalising each one with its running mean
(loss-ratio balancing), tracked by metric objects owned by a callback.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {
    "n": 512, "d": 12, "classes": 5, "label_ratio": 0.6,
    "hidden": 48, "smoothing": 0.1, "meter_momentum": 0.9,
    "lr": 2e-2, "weight_decay": 1e-4, "epochs": 3, "batch_size": 64, "clip": 2.0,
    "seed": 0, "out_dir": "out",
}


def make_data(cfg, gen):
    x = torch.randn(cfg["n"], cfg["d"], generator=gen)
    w_c = torch.randn(cfg["d"], cfg["classes"], generator=gen)
    y_cls = (x @ w_c + 0.5 * torch.randn(cfg["n"], cfg["classes"], generator=gen)).argmax(1)
    unlabeled = torch.rand(cfg["n"], generator=gen) > cfg["label_ratio"]
    y_cls[unlabeled] = -1                                   # missing label
    y_reg = (x[:, :3].sum(1, keepdim=True) ** 2) / 3.0 + 0.1 * torch.randn(cfg["n"], 1, generator=gen)
    return x, y_cls, y_reg


class MultiTaskNet(nn.Module):
    def __init__(self, d, hidden, classes):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.cls_head = nn.Linear(hidden, classes)
        self.reg_head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.reg_head(h)


def smoothed_ce(logits, target, eps, ignore_index=-1):
    """Label-smoothed cross-entropy that skips rows without a label."""
    logp = F.log_softmax(logits, dim=-1)
    valid = target != ignore_index
    logp = logp.masked_fill(~valid[:, None], 0.0)      # unlabeled rows contribute nothing
    nll = -logp.gather(1, target.clamp(min=0)[:, None]).squeeze(1)
    smooth = -logp.mean(dim=-1)
    per_row = (1.0 - eps) * nll + eps * smooth
    return per_row.sum() / valid.sum().clamp(min=1)


class RunningMean:
    """Exponential moving average of a scalar metric."""

    def __init__(self, momentum):
        self.momentum = momentum
        self.value = None

    def update(self, x):
        self.value = x if self.value is None else self.momentum * self.value + (1 - self.momentum) * x

    def compute(self):
        return self.value


class Callback:
    def on_losses(self, trainer, losses): ...
    def on_step_end(self, trainer, logs): ...
    def on_epoch_end(self, trainer, epoch): ...


class LossBalancer(Callback):
    """w_k = 1 / running_mean(L_k): every task contributes ~1 to the total."""

    def __init__(self, momentum):
        self.momentum = momentum
        self.meters = {}

    def on_losses(self, trainer, losses):
        for k, v in losses.items():
            self.meters.setdefault(k, RunningMean(self.momentum)).update(v.detach())
        trainer.loss_weights = {k: 1.0 / (m.compute() + 1e-8) for k, m in self.meters.items()}


class PrintLogger(Callback):
    def on_step_end(self, trainer, logs):
        parts = " ".join(f"{k} {v:.6f}" for k, v in logs.items())
        print(f"step {trainer.global_step:3d} {parts}")


class Checkpoint(Callback):
    def __init__(self, out_dir):
        self.out_dir = out_dir

    def on_epoch_end(self, trainer, epoch):
        os.makedirs(self.out_dir, exist_ok=True)
        torch.save({"epoch": epoch, "model": trainer.model.state_dict()},
                   os.path.join(self.out_dir, "multitask.pt"))


class Trainer:
    def __init__(self, model, optimizer, scheduler, callbacks, cfg):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.callbacks = callbacks
        self.cfg = cfg
        self.loss_weights = {"cls": 1.0, "reg": 1.0}
        self.global_step = 0

    def compute_losses(self, batch):
        x, y_cls, y_reg = batch
        logits, reg = self.model(x)
        return {"cls": smoothed_ce(logits, y_cls, self.cfg["smoothing"]),
                "reg": F.smooth_l1_loss(reg, y_reg)}

    def train_step(self, batch):
        self.model.train()
        losses = self.compute_losses(batch)
        for cb in self.callbacks:
            cb.on_losses(self, losses)
        total = sum(self.loss_weights[k] * v for k, v in losses.items())
        self.optimizer.zero_grad()
        total.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["clip"])
        self.optimizer.step()
        self.scheduler.step()
        logs = {"total": total.item(), **{k: v.item() for k, v in losses.items()}}
        for cb in self.callbacks:
            cb.on_step_end(self, logs)
        self.global_step += 1

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for batch in loader:
                self.train_step(batch)
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)


def main():
    cfg = CONFIG
    torch.manual_seed(cfg["seed"])
    x, y_cls, y_reg = make_data(cfg, torch.Generator().manual_seed(cfg["seed"] + 1))
    loader = DataLoader(TensorDataset(x, y_cls, y_reg), batch_size=cfg["batch_size"], shuffle=True,
                        generator=torch.Generator().manual_seed(cfg["seed"] + 2))
    model = MultiTaskNet(cfg["d"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg["lr"], total_steps=cfg["epochs"] * len(loader))
    trainer = Trainer(model, opt, sched,
                      [LossBalancer(cfg["meter_momentum"]), PrintLogger(), Checkpoint(cfg["out_dir"])], cfg)
    trainer.fit(loader, cfg["epochs"])
    with torch.no_grad():
        logits, reg = model(x)
        lab = y_cls >= 0
        acc = (logits.argmax(1)[lab] == y_cls[lab]).float().mean().item()
        mse = F.mse_loss(reg, y_reg).item()
    print(f"acc {acc:.4f} mse {mse:.4f}")
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
