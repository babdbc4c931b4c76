"""Quantization-aware training of a 4-bit MLP with LSQ step sizes (weights and activations)."""
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml

from quant import QuantAct, QuantLinear


class QMLP(nn.Module):
    def __init__(self, d_in, hidden, n_cls, bits):
        super().__init__()
        self.fc1 = QuantLinear(d_in, hidden, bits)
        self.act1 = QuantAct(bits)
        self.fc2 = QuantLinear(hidden, hidden, bits)
        self.act2 = QuantAct(bits)
        self.fc3 = nn.Linear(hidden, n_cls)       # keep the classifier in full precision

    def forward(self, x):
        x = self.act1(F.relu(self.fc1(x)))
        x = self.act2(F.relu(self.fc2(x)))
        return self.fc3(x)


def make_data(n, d, k, seed):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(k, d, generator=torch.Generator().manual_seed(1234)) * 1.5
    y = torch.randint(0, k, (n,), generator=g)
    x = centers[y] + torch.randn(n, d, generator=g)
    return x, y


def main():
    cfg = yaml.safe_load(Path(__file__).with_name("qat.yaml").read_text())
    torch.manual_seed(cfg["seed"])
    x_tr, y_tr = make_data(cfg["n_train"], cfg["in_features"], cfg["num_classes"], cfg["seed"] + 1)
    x_te, y_te = make_data(cfg["n_test"], cfg["in_features"], cfg["num_classes"], cfg["seed"] + 2)
    model = QMLP(cfg["in_features"], cfg["hidden"], cfg["num_classes"], cfg["bits"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    for epoch in range(1, cfg["epochs"] + 1):
        model.train()
        perm = torch.randperm(cfg["n_train"])
        total = 0.0
        for i in range(0, cfg["n_train"], cfg["batch_size"]):
            idx = perm[i:i + cfg["batch_size"]]
            loss = F.cross_entropy(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * idx.numel()
        model.eval()
        with torch.no_grad():
            acc = (model(x_te).argmax(1) == y_te).float().mean().item()
        steps = " ".join(f"{m.alpha.mean().item():.5f}" for m in (model.fc1, model.act1, model.fc2, model.act2))
        print(f"epoch {epoch} loss {total / cfg['n_train']:.5f} test_acc {acc:.4f} steps [{steps}]")


if __name__ == "__main__":
    main()
