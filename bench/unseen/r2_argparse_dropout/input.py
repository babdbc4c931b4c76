import argparse

import torch
import torch.nn as nn


def build(hidden, p):
    return nn.Sequential(
        nn.Linear(10, hidden),
        nn.Tanh(),
        nn.Dropout(p, inplace=True),
        nn.Linear(hidden, hidden),
        nn.LeakyReLU(0.1),
        nn.Linear(hidden, 1),
    )


def main():
    parser = argparse.ArgumentParser(description="toy regression")
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    X = torch.randn(512, 10)
    y = torch.sin(X.sum(1, keepdim=True))
    model = build(args.hidden, args.dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(X.size(0))
        running = 0.0
        for i in range(0, X.size(0), 128):
            b = perm[i:i + 128]
            loss = nn.functional.mse_loss(model(X[b]), y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item()
        if epoch % 5 == 0:
            print(f"epoch {epoch} train loss {running / 4:.6f}")
    model.eval()
    with torch.no_grad():
        print(f"eval loss {nn.functional.mse_loss(model(X), y).item():.6f}")


if __name__ == "__main__":
    main()
