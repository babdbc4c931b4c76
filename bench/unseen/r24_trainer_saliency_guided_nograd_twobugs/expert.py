"""Saliency-guided training (Ismail, Corrada Bravo & Feizi, NeurIPS 2021) on tabular data.

Every step: input gradients of the true-class logit give a saliency map; the k lowest-saliency
features of each sample are replaced by random values, and the model is trained with
CE(f(x)) + lambda * KL(f(x_masked) || f(x)).  Written as a Trainer with callbacks.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CFG = dict(n=640, d=20, informative=5, classes=3, hidden=64, dropout=0.1, mask_frac=0.5,
           kl_weight=1.0, lr=3e-3, epochs=2, batch_size=64, seed=0, out_dir="out")


def make_data(cfg, gen):
    x = torch.randn(cfg["n"], cfg["d"], generator=gen)
    w = torch.randn(cfg["informative"], cfg["classes"], generator=gen)
    y = (x[:, : cfg["informative"]] @ w).argmax(1)
    return x, y


class Callback:
    def on_step_end(self, trainer, logs): ...
    def on_epoch_end(self, trainer, epoch, logs): ...


class StepPrinter(Callback):
    def on_step_end(self, trainer, logs):
        print(f"step {trainer.step:3d} loss {logs['loss']:.6f} ce {logs['ce']:.6f} kl {logs['kl']:.6f}")


class EpochSummary(Callback):
    def on_epoch_end(self, trainer, epoch, logs):
        print(f"epoch {epoch} acc {logs['acc']:.4f} salient-on-informative {logs['hit']:.4f}")


class Checkpointer(Callback):
    def __init__(self, out_dir):
        self.out_dir = out_dir

    def on_epoch_end(self, trainer, epoch, logs):
        os.makedirs(self.out_dir, exist_ok=True)
        torch.save({"model": trainer.model.state_dict(), "opt": trainer.optimizer.state_dict(),
                    "epoch": epoch}, os.path.join(self.out_dir, "sgt_last.pt"))


class SaliencyGuidedTrainer:
    def __init__(self, model, optimizer, scheduler, cfg, callbacks=()):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.cfg = cfg
        self.callbacks = list(callbacks)
        self.step = 0
        self.gen = torch.Generator().manual_seed(cfg["seed"] + 7)

    def saliency(self, x, logits, y):
        """|d logit_y / d x| -- an explanation, it must not take part in training."""
        score = logits.gather(1, y[:, None]).sum()
        grad, = torch.autograd.grad(score, x, retain_graph=True)
        return grad.abs()

    def mask_low_saliency(self, x, sal):
        k = int(self.cfg["mask_frac"] * x.shape[1])
        idx = sal.topk(k, dim=1, largest=False).indices
        lo, hi = x.min(dim=1, keepdim=True).values, x.max(dim=1, keepdim=True).values
        rnd = lo + (hi - lo) * torch.rand(x.shape[0], k, generator=self.gen)
        return x.scatter(1, idx, rnd)

    def train_step(self, x, y):
        self.model.train()
        self.optimizer.zero_grad()
        x = x.clone().requires_grad_(True)
        logits = self.model(x)
        sal = self.saliency(x, logits, y)
        x_masked = self.mask_low_saliency(x.detach(), sal)
        logits_m = self.model(x_masked)
        ce = F.cross_entropy(logits, y)
        kl = F.kl_div(F.log_softmax(logits_m, dim=1), F.log_softmax(logits, dim=1),
                      log_target=True, reduction="batchmean")
        loss = ce + self.cfg["kl_weight"] * kl
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
        self.optimizer.step()
        self.scheduler.step()
        top = sal.topk(self.cfg["informative"], dim=1).indices
        hit = (top < self.cfg["informative"]).float().mean().item()
        return {"loss": loss.item(), "ce": ce.item(), "kl": kl.item(), "hit": hit}

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            hits = []
            for x, y in loader:
                logs = self.train_step(x, y)
                hits.append(logs["hit"])
                for cb in self.callbacks:
                    cb.on_step_end(self, logs)
                self.step += 1
            self.model.eval()
            with torch.no_grad():
                xs, ys = loader.dataset.tensors
                acc = (self.model(xs).argmax(1) == ys).float().mean().item()
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, {"acc": acc, "hit": sum(hits) / len(hits)})


def main():
    cfg = CFG
    torch.manual_seed(cfg["seed"])
    x, y = make_data(cfg, torch.Generator().manual_seed(cfg["seed"] + 1))
    loader = DataLoader(TensorDataset(x, y), batch_size=cfg["batch_size"], shuffle=True,
                        generator=torch.Generator().manual_seed(cfg["seed"] + 2))
    model = nn.Sequential(nn.Linear(cfg["d"], cfg["hidden"]), nn.ReLU(), nn.Dropout(cfg["dropout"]),
                          nn.Linear(cfg["hidden"], cfg["hidden"]), nn.ReLU(), nn.Linear(cfg["hidden"], cfg["classes"]))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg["epochs"] * len(loader))
    trainer = SaliencyGuidedTrainer(model, opt, sched, cfg,
                                    [StepPrinter(), EpochSummary(), Checkpointer(cfg["out_dir"])])
    trainer.fit(loader, cfg["epochs"])
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
