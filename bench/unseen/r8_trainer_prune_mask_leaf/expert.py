"""Gradual magnitude pruning of an MLP classifier.
Run: python input.py [--config prune_config.json]"""
import argparse
import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_blobs(n, in_dim, n_classes, seed):
    g = torch.Generator().manual_seed(seed)
    centers = 1.5 * torch.randn(n_classes, in_dim, generator=torch.Generator().manual_seed(7))
    y = torch.randint(0, n_classes, (n,), generator=g)
    x = centers[y] + 3.0 * torch.randn(n, in_dim, generator=g)
    return x, y


class MLP(nn.Module):
    def __init__(self, in_dim, hidden, n_classes):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.out(F.relu(self.fc2(F.relu(self.fc1(x)))))


class PruningTrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.opt = torch.optim.Adam(model.parameters(), **cfg["optim"])
        self.prunable = [model.fc1, model.fc2]
        self.masks = {}

    def sparsity_at(self, epoch):
        p = self.cfg["prune"]
        if epoch < p["start_epoch"]:
            return 0.0
        frac = min(1.0, (epoch - p["start_epoch"] + 1) / p["ramp_epochs"])
        return p["final_sparsity"] * frac

    def update_masks(self, sparsity):
        for layer in self.prunable:
            w = layer.weight.detach().abs()
            k = int(sparsity * w.numel())
            thr = w.flatten().kthvalue(k).values if k > 0 else w.new_tensor(-1.0)
            self.masks[layer] = w > thr

    def apply_masks(self):
        with torch.no_grad():
            for layer, mask in self.masks.items():
                layer.weight[~mask] = 0.0

    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        if self.masks:
            self.apply_masks()          # keep pruned weights at zero after the update
        return loss.item()

    def fit(self, train, val):
        gen = torch.Generator().manual_seed(self.cfg["train"]["seed"])
        bs = self.cfg["train"]["batch_size"]
        for epoch in range(self.cfg["train"]["epochs"]):
            sparsity = self.sparsity_at(epoch)
            if sparsity > 0:
                self.update_masks(sparsity)
                self.apply_masks()
            self.model.train()
            perm = torch.randperm(len(train[0]), generator=gen)
            losses = [self.train_step(train[0][idx], train[1][idx]) for idx in perm.split(bs)]
            print(f"epoch {epoch} sparsity {self.current_sparsity():.3f} "
                  f"loss {sum(losses) / len(losses):.5f} val_acc {self.evaluate(*val):.4f}")

    def current_sparsity(self):
        zeros = sum((l.weight == 0).sum().item() for l in self.prunable)
        return zeros / sum(l.weight.numel() for l in self.prunable)

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        return (self.model(x).argmax(1) == y).float().mean().item()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default=str(Path(__file__).with_name("prune_config.json")))
    args = p.parse_args()
    cfg = json.loads(Path(args.config).read_text())
    t = cfg["train"]
    torch.manual_seed(t["seed"])
    m = cfg["model"]
    train = make_blobs(t["n_train"], m["in_dim"], m["n_classes"], seed=1)
    val = make_blobs(t["n_val"], m["in_dim"], m["n_classes"], seed=2)
    trainer = PruningTrainer(MLP(**m), cfg)
    trainer.fit(train, val)
    print(f"checksum {sum(p.abs().sum() for p in trainer.model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
