"""N-BEATS (generic architecture) on a synthetic multi-seasonal series.

Each block reads the current residual window, emits a backcast (what it explains
of the input) and a forecast; the residual passed to the next block is the input
minus the backcast and the final forecast is the sum of block forecasts
(Oreshkin et al., 2020, doubly residual stacking).

Usage:  python input.py [--epochs 5] [--blocks 3] [--lookback 24] [--horizon 8]
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="N-BEATS generic on a toy series")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--blocks", type=int, default=3)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--units", type=int, default=64)
    p.add_argument("--lookback", type=int, default=24)
    p.add_argument("--horizon", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


# ----------------------------------------------------------------------------- data
def make_series(n=1200, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(n, dtype=torch.float32)
    series = (0.002 * t + torch.sin(2 * math.pi * t / 24) + 0.5 * torch.sin(2 * math.pi * t / 7)
              + 0.1 * torch.randn(n, generator=g))
    return series


class WindowDataset(torch.utils.data.Dataset):
    def __init__(self, series, lookback, horizon):
        self.series, self.lookback, self.horizon = series, lookback, horizon

    def __len__(self):
        return len(self.series) - self.lookback - self.horizon + 1

    def __getitem__(self, i):
        x = self.series[i:i + self.lookback]
        y = self.series[i + self.lookback:i + self.lookback + self.horizon]
        level = x[-1]
        return x - level, y - level


# ----------------------------------------------------------------------------- model
class GenericBlock(nn.Module):
    """FC stack -> theta -> linear backcast/forecast bases (the 'generic' basis)."""

    def __init__(self, lookback, horizon, units, layers):
        super().__init__()
        fc, d = [], lookback
        for _ in range(layers):
            fc.append(nn.Linear(d, units))
            d = units
        self.fc = nn.ModuleList(fc)
        self.theta_b = nn.Linear(units, units // 4, bias=False)
        self.theta_f = nn.Linear(units, units // 4, bias=False)
        self.backcast_basis = nn.Linear(units // 4, lookback)
        self.forecast_basis = nn.Linear(units // 4, horizon)

    def forward(self, x):
        h = x
        for layer in self.fc:
            h = F.relu(layer(h))
        return self.backcast_basis(self.theta_b(h)), self.forecast_basis(self.theta_f(h))


class NBeats(nn.Module):
    def __init__(self, lookback, horizon, units, layers, blocks):
        super().__init__()
        self.horizon = horizon
        self.blocks = nn.ModuleList(GenericBlock(lookback, horizon, units, layers) for _ in range(blocks))

    def forward(self, x):
        residuals = x
        forecast = x.new_zeros(x.shape[0], self.horizon)
        for block in self.blocks:
            backcast, block_forecast = block(residuals)
            residuals -= backcast
            forecast += block_forecast
        return forecast


# ----------------------------------------------------------------------------- loop
def smape(pred, target, eps=1e-3):
    return (2 * (pred - target).abs() / (pred.abs() + target.abs() + eps)).mean()


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    series = make_series(seed=args.seed)
    split = 900
    train_ds = WindowDataset(series[:split], args.lookback, args.horizon)
    val_ds = WindowDataset(series[split - args.lookback:], args.lookback, args.horizon)
    loader = torch.utils.data.DataLoader(train_ds, batch_size=args.batch_size, shuffle=True,
                                         generator=torch.Generator().manual_seed(args.seed))
    model = NBeats(args.lookback, args.horizon, args.units, args.layers, args.blocks)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        for x, y in loader:
            pred = model(x)
            loss = F.mse_loss(pred, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(x)
            n += len(x)
        model.eval()
        with torch.no_grad():
            xv = torch.stack([val_ds[i][0] for i in range(len(val_ds))])
            yv = torch.stack([val_ds[i][1] for i in range(len(val_ds))])
            pv = model(xv)
            val_mse = F.mse_loss(pv, yv).item()
            val_smape = smape(pv, yv).item()
        print(f"epoch {epoch} train_mse {total / n:.6f} val_mse {val_mse:.6f} val_smape {val_smape:.6f}")
    checksum = sum(p.double().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
