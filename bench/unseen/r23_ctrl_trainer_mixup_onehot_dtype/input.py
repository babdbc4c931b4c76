"""Trainer with a MixUp callback; labels come from a float table."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class MixUp:
    def __init__(self, n_classes, alpha=0.4):
        self.n_classes = n_classes
        self.beta = torch.distributions.Beta(torch.tensor([alpha]), torch.tensor([alpha]))

    def on_batch(self, trainer, x, y):
        lam = self.beta.sample().item()
        perm = torch.randperm(x.size(0))
        y1 = F.one_hot(y, self.n_classes).float()
        x = lam * x + (1 - lam) * x[perm]
        y1 = lam * y1 + (1 - lam) * y1[perm]
        return x, y1


class Trainer:
    def __init__(self, model, optimizer, callbacks, epochs):
        self.model, self.optimizer, self.callbacks, self.epochs = model, optimizer, callbacks, epochs
        self.losses = []

    def train_step(self, x, y):
        for cb in self.callbacks:
            x, y = cb.on_batch(self, x, y)
        logits = self.model(x)
        loss = torch.sum(-y * F.log_softmax(logits, 1), 1).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, loader):
        for epoch in range(self.epochs):
            for x, y in loader:
                self.losses.append(self.train_step(x, y))
            print(f"epoch {epoch} loss {self.losses[-1]:.6f}")


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    table = rng.normal(size=(300, 9)).astype(np.float32)      # 8 features + label column
    table[:, 8] = (table[:, 0] + table[:, 1] > 0).astype(np.float32) + (table[:, 2] > 1).astype(np.float32)
    X = torch.from_numpy(table[:, :8])
    y = torch.from_numpy(table[:, 8])
    loader = DataLoader(TensorDataset(X, y), batch_size=50, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    Trainer(model, opt, [MixUp(3)], epochs=3).fit(loader)
    with torch.no_grad():
        acc = (model(X).argmax(1) == y.long()).float().mean().item()
    print(f"acc {acc:.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
