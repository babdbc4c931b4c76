"""Tabular regression with gated linear units and a running-RMS normaliser.
Run: python input.py"""
import torch
import torch.nn.functional as F

from models import GatedRegressor


class Trainer:
    def __init__(self, model, lr=3e-3, batch_size=32, epochs=5):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=2, gamma=0.5)
        self.batch_size = batch_size
        self.epochs = epochs

    def train_step(self, x, y):
        pred = self.model(x)
        loss = F.mse_loss(pred, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.model.norm.rms = self.model.norm.rms.detach()
        return loss.item()

    def train_epoch(self, x, y):
        self.model.train()
        perm = torch.randperm(x.size(0))
        total = 0.0
        for i in range(0, x.size(0), self.batch_size):
            idx = perm[i:i + self.batch_size]
            total += self.train_step(x[idx], y[idx]) * idx.numel()
        self.scheduler.step()
        return total / x.size(0)

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        return F.mse_loss(self.model(x), y).item()

    def fit(self, train, val):
        for epoch in range(self.epochs):
            train_mse = self.train_epoch(*train)
            print(f"epoch {epoch} train mse {train_mse:.4f} val mse {self.evaluate(*val):.4f}")


def make_data(n, w1, w2, gen):
    x = torch.randn(n, w1.size(0), generator=gen)
    y = torch.tanh(x @ w1) @ w2 + 0.1 * torch.randn(n, w2.size(1), generator=gen)
    return x, y


if __name__ == "__main__":
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    w1, w2 = torch.randn(12, 16, generator=gen) / 3, torch.randn(16, 2, generator=gen)
    train, val = make_data(640, w1, w2, gen), make_data(256, w1, w2, gen)
    model = GatedRegressor(12, 32, 2)
    Trainer(model).fit(train, val)
    print(f"running rms mean {model.norm.rms.mean().item():.4f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")
