"""Tabular regression with an MLP; data prepared with numpy, hyperparameters in train.yaml.
Run: python input.py [--config train.yaml] [--epochs N]"""
import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml


def make_table(n, n_features, noise, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    w = np.linspace(-1.0, 1.0, n_features)
    y = np.sin(X @ w) + 0.5 * X[:, 0] * X[:, 1] + noise * rng.normal(size=n)
    return X, y


def standardize_(X, mean, std):
    X -= mean
    X /= std
    return X


class MLP(nn.Module):
    def __init__(self, n_features, hidden, dropout):
        super().__init__()
        self.fc1 = nn.Linear(n_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.fc1(x)
        h.relu_()
        h = self.drop(F.relu(self.fc2(h)))
        return self.out(h).squeeze(-1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default=str(Path(__file__).with_name("train.yaml")))
    p.add_argument("--epochs", type=int, default=None)
    args = p.parse_args()
    cfg = yaml.safe_load(Path(args.config).read_text())
    if args.epochs is not None:
        cfg["train"]["epochs"] = args.epochs
    d, m, t = cfg["data"], cfg["model"], cfg["train"]

    torch.manual_seed(cfg["seed"])
    X_tr, y_tr = make_table(d["n_train"], d["n_features"], d["noise"], seed=1)
    X_va, y_va = make_table(d["n_val"], d["n_features"], d["noise"], seed=2)
    mean, std = X_tr.mean(0), X_tr.std(0)
    standardize_(X_tr, mean, std)
    standardize_(X_va, mean, std)
    X_tr, y_tr = torch.from_numpy(X_tr).float(), torch.from_numpy(y_tr).float()
    X_va, y_va = torch.from_numpy(X_va).float(), torch.from_numpy(y_va).float()

    model = MLP(d["n_features"], m["hidden"], m["dropout"])
    opt = torch.optim.Adam(model.parameters(), lr=t["lr"])
    for epoch in range(t["epochs"]):
        model.train()
        perm = torch.randperm(len(X_tr))
        total = 0.0
        for idx in perm.split(t["batch_size"]):
            loss = F.mse_loss(model(X_tr[idx]), y_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        model.eval()
        with torch.no_grad():
            val = F.mse_loss(model(X_va), y_va).item()
        print(f"epoch {epoch} train_mse {total / len(X_tr):.5f} val_mse {val:.5f}")
    print(f"checksum {sum(q.abs().sum() for q in model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
