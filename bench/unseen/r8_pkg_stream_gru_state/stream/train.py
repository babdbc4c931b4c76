"""Stateful GRU forecaster. Run from the project root: python -m stream.train"""
import torch

from .config import parse_config
from .data import make_streams, windows
from .losses import forecast_loss
from .model import StatefulForecaster


def run_epoch(model, opt, series, cfg):
    model.train()
    model.reset_state()                  # new pass over the streams: forget the old context
    total, n = 0.0, 0
    for x, y in windows(series, cfg.window):
        pred = model(x)
        loss = forecast_loss(pred, y, cfg.huber_delta)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
        n += 1
    return total / n


@torch.no_grad()
def evaluate(model, series, cfg):
    model.eval()
    model.reset_state()
    errs = [torch.mean((model(x) - y) ** 2).item() for x, y in windows(series, cfg.window)]
    return sum(errs) / len(errs)


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    train = make_streams(cfg.n_streams, cfg.stream_len, seed=1)
    val = make_streams(cfg.n_streams, cfg.stream_len, seed=2)
    model = StatefulForecaster(cfg.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        loss = run_epoch(model, opt, train, cfg)
        print(f"epoch {epoch} train_huber {loss:.5f} val_mse {evaluate(model, val, cfg):.5f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
