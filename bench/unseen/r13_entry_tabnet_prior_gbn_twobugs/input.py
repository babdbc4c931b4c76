"""Train a small TabNet classifier on a synthetic tabular task."""
import json
from pathlib import Path

import torch

from tabnet import TabNet, Trainer

HERE = Path(__file__).resolve().parent


def make_tabular(n, n_features, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, n_features, generator=g)
    score = torch.stack([
        x[:, 0] * x[:, 3] + 0.5 * x[:, 7],
        torch.sin(2.0 * x[:, 1]) - x[:, 5],
        0.8 * x[:, 3] - x[:, 7].abs(),
    ], dim=1)
    y = (score + 0.3 * torch.randn(n, 3, generator=g)).argmax(1)
    return x, y


def main():
    cfg = json.loads((HERE / "config.json").read_text())
    torch.manual_seed(cfg["seed"])
    x_tr, y_tr = make_tabular(cfg["n_train"], cfg["n_features"], cfg["seed"])
    x_va, y_va = make_tabular(cfg["n_valid"], cfg["n_features"], cfg["seed"] + 1)

    model = TabNet(cfg["n_features"], cfg["n_classes"], n_d=cfg["n_d"], n_a=cfg["n_a"],
                   n_steps=cfg["n_steps"], gamma=cfg["gamma"],
                   virtual_batch_size=cfg["virtual_batch_size"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    trainer = Trainer(model, opt, lambda_sparse=cfg["lambda_sparse"])
    trainer.fit(x_tr, y_tr, x_va, y_va, cfg["epochs"], cfg["batch_size"],
                torch.Generator().manual_seed(cfg["seed"] + 2))

    imp = model.explain(x_va)
    top = imp.topk(3)
    print("top features", top.indices.tolist(), "share", f"{top.values.sum().item():.4f}")
    print(f"param checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
