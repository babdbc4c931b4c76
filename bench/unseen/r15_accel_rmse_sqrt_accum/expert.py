"""Tabular regression (synthetic house prices) trained with accelerate.

RMSE is the competition metric, so it is also the training loss; gradients are
accumulated over --accum micro-batches before each optimizer step.
"""
import argparse

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class RMSELoss(nn.Module):
    def __init__(self, eps=1e-8):
        super().__init__()
        self.mse = nn.MSELoss()
        self.eps = eps

    def forward(self, pred, target):
        return torch.sqrt(self.mse(pred, target) + self.eps)


def make_data(n, d, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    w = torch.randn(d, 1, generator=g)
    y = torch.tanh(x @ w) * 2.0 + 0.3 * x[:, :1] ** 2 + 0.1 * torch.randn(n, 1, generator=g)
    return x, y


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--accum", type=int, default=4)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    accelerator = Accelerator(cpu=True)

    x_all, y_all = make_data(640, 8, args.seed)
    x, y, xv, yv = x_all[:512], y_all[:512], x_all[512:], y_all[512:]
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    criterion = RMSELoss()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for i, (xb, yb) in enumerate(loader):
            loss = criterion(model(xb), yb)
            running += loss.item()
            loss = loss / args.accum
            accelerator.backward(loss)
            if (i + 1) % args.accum == 0:
                optimizer.step()
                optimizer.zero_grad()
                step += 1
                if step % 8 == 0:
                    print(f"epoch {epoch} step {step:3d} train_rmse {running / (i + 1):.4f}")
        model.eval()
        with torch.no_grad():
            val = criterion(model(xv), yv).item()
        print(f"epoch {epoch} val_rmse {val:.4f}")
    print(f"final val_rmse {val:.4f}")


if __name__ == "__main__":
    main()
