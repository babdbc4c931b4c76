"""Batch Renormalization (Ioffe 2017) written by hand for a small-batch MLP classifier."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class BatchRenorm1d(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5, r_max=3.0, d_max=5.0):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.r_max = r_max
        self.d_max = d_max
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_std", torch.ones(num_features))

    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            std = (x.var(0, unbiased=False) + self.eps).sqrt()
            # r and d are constants for backprop (stop_gradient in the paper)
            r = (std.detach() / self.running_std).clamp(1.0 / self.r_max, self.r_max)
            d = ((mean.detach() - self.running_mean) / self.running_std).clamp(-self.d_max, self.d_max)
            x_hat = (x - mean) / std * r + d
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(mean, alpha=self.momentum)
                self.running_std.mul_(1 - self.momentum).add_(std, alpha=self.momentum)
        else:
            x_hat = (x - self.running_mean) / self.running_std
        return self.weight * x_hat + self.bias


class Net(nn.Module):
    def __init__(self, d_in, hidden, n_cls):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.brn1 = BatchRenorm1d(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.brn2 = BatchRenorm1d(hidden)
        self.out = nn.Linear(hidden, n_cls)

    def forward(self, x):
        x = F.relu(self.brn1(self.fc1(x)))
        x = F.relu(self.brn2(self.fc2(x)))
        return self.out(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--hidden", type=int, default=32)
    args = p.parse_args()

    torch.manual_seed(0)
    X = torch.randn(512, 10) * 3 + 1
    y = (X[:, 0] * X[:, 1] > 0).long() + (X[:, 2] > 1).long()
    model = Net(10, args.hidden, 3)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    for step in range(args.steps):
        idx = torch.randint(0, X.size(0), (args.batch,))
        logits = model(X[idx])
        loss = F.cross_entropy(logits, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            print(f"step {step} loss {loss.item():.6f}")

    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(1) == y).float().mean().item()
    print(f"eval acc {acc:.6f}")
    print(f"running_std sum {model.brn1.running_std.sum().item():.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
