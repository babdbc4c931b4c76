"""Small Glow-style flow (ActNorm -> affine coupling -> permutation) on 4-D toy data."""
import argparse
import math

import torch
import torch.nn as nn


class ActNorm(nn.Module):
    """Data-dependent initialisation on the first batch (Kingma & Dhariwal 2018)."""

    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.logs = nn.Parameter(torch.zeros(dim))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def initialize(self, x):
        mean = x.mean(0)
        std = x.std(0)
        self.loc.copy_(-mean)
        self.logs.copy_(torch.log(1.0 / (std + 1e-6)))

    def forward(self, x):
        if self.initialized.item() == 0:
            self.initialize(x.detach())
            self.initialized.fill_(1)
        y = (x + self.loc) * torch.exp(self.logs)
        return y, self.logs.sum().expand(x.shape[0])


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim // 2, hidden), nn.ReLU(), nn.Linear(hidden, dim))
        nn.init.zeros_(self.net[2].weight)
        nn.init.zeros_(self.net[2].bias)

    def forward(self, x):
        xa, xb = x.chunk(2, dim=1)
        log_s, t = self.net(xa).chunk(2, dim=1)
        log_s = torch.tanh(log_s)
        xb.mul_(torch.exp(log_s)).add_(t)
        return torch.cat([xa, xb], dim=1), log_s.sum(1)


class Flow(nn.Module):
    def __init__(self, dim=4, hidden=32, n_steps=3):
        super().__init__()
        self.norms = nn.ModuleList(ActNorm(dim) for _ in range(n_steps))
        self.couplings = nn.ModuleList(AffineCoupling(dim, hidden) for _ in range(n_steps))
        self.register_buffer("perm", torch.arange(dim - 1, -1, -1))

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for norm, coupling in zip(self.norms, self.couplings):
            x, ld = norm(x)
            logdet = logdet + ld
            x, ld = coupling(x)
            logdet = logdet + ld
            x = x[:, self.perm]
        return x, logdet

    def nll(self, x):
        z, logdet = self(x)
        log_pz = -0.5 * (z.pow(2) + math.log(2 * math.pi)).sum(1)
        return -(log_pz + logdet).mean()


def make_data(n, gen):
    a = torch.randn(n, 1, generator=gen)
    b = a.pow(2) + 0.3 * torch.randn(n, 1, generator=gen)
    c = torch.sin(2 * a) + 0.2 * torch.randn(n, 1, generator=gen)
    d = 3.0 + 0.5 * torch.randn(n, 1, generator=gen)
    return torch.cat([a, b, c, d], 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-2)
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    data = make_data(256, gen)
    flow = Flow()
    opt = torch.optim.Adam(flow.parameters(), lr=args.lr)
    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(data), generator=gen)
        for i in range(0, len(data), args.batch):
            x = data[perm[i:i + args.batch]]
            loss = flow.nll(x)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 4 == 0:
                print(f"step {step} nll {loss.item():.6f}")
            step += 1
    with torch.no_grad():
        print(f"final nll {flow.nll(data).item():.6f}")
    total = sum(p.sum() for p in flow.parameters()).item()
    print(f"checksum {total:.6f}")


if __name__ == "__main__":
    main()
