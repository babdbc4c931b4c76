"""Stateful GRU forecaster for multivariate sensor streams.

Each stream is cut into consecutive windows; the GRU state is carried from one
window to the next so the model sees the whole history.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    n_streams: int = 8
    n_features: int = 4
    stream_len: int = 400
    window: int = 25
    hidden_size: int = 32
    epochs: int = 4
    lr: float = 3e-3
    seed: int = 0


def make_streams(cfg):
    t = torch.arange(cfg.stream_len, dtype=torch.float32)
    phase = torch.rand(cfg.n_streams, cfg.n_features, 1) * 6.28
    freq = 0.05 + 0.1 * torch.rand(cfg.n_streams, cfg.n_features, 1)
    x = torch.sin(freq * t + phase) + 0.1 * torch.randn(cfg.n_streams, cfg.n_features, cfg.stream_len)
    return x.permute(2, 0, 1).contiguous()  # (T, streams, features)


class Forecaster(nn.Module):
    def __init__(self, n_features, hidden_size):
        super().__init__()
        self.gru = nn.GRU(n_features, hidden_size)
        self.head = nn.Linear(hidden_size, n_features)

    def forward(self, x, h=None):
        out, h = self.gru(x, h)
        return self.head(out), h


class Trainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        self.hidden = None

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        pred, self.hidden = self.model(x, self.hidden)
        loss = F.mse_loss(pred, y)
        loss.backward(retain_graph=True)
        self.optimizer.step()
        return loss.item()

    def train_epoch(self, series):
        self.model.train()
        self.hidden = None
        losses = []
        for start in range(0, series.size(0) - 1, self.cfg.window):
            x = series[start:start + self.cfg.window]
            y = series[start + 1:start + 1 + self.cfg.window]
            x = x[:y.size(0)]
            losses.append(self.train_step(x, y))
        return sum(losses) / len(losses)

    @torch.no_grad()
    def evaluate(self, series):
        self.model.eval()
        pred, _ = self.model(series[:-1])
        return F.mse_loss(pred, series[1:]).item()

    def fit(self, train, val):
        for epoch in range(self.cfg.epochs):
            train_loss = self.train_epoch(train)
            val_loss = self.evaluate(val)
            print(f"epoch {epoch} train mse {train_loss:.4f} val mse {val_loss:.4f}")


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    series = make_streams(cfg)
    train, val = series[:, :6], series[:, 6:]
    model = Forecaster(cfg.n_features, cfg.hidden_size)
    trainer = Trainer(model, cfg)
    trainer.fit(train, val)
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
