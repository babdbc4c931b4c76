"""Fit a neural ODE to a spiral (after torchdiffeq's examples/ode_demo.py).

No torchdiffeq here: a fixed-step RK4 solver is written out by hand.
"""
import argparse
from dataclasses import asdict, dataclass, fields

import torch
import torch.nn as nn


@dataclass
class Config:
    data_size: int = 200
    t_end: float = 10.0
    batch_time: int = 10
    batch_size: int = 16
    niters: int = 100
    test_freq: int = 25
    lr: float = 1e-3
    seed: int = 0


def parse_config() -> Config:
    parser = argparse.ArgumentParser(description="neural ODE spiral demo")
    for f in fields(Config):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=f.type, default=f.default)
    return Config(**vars(parser.parse_args()))


class Lambda(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("A", torch.tensor([[-0.1, 2.0], [-2.0, -0.1]]))

    def forward(self, t, y):
        return torch.mm(y ** 3, self.A)


class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 50), nn.Tanh(), nn.Linear(50, 2))
        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0, std=0.1)
                nn.init.constant_(m.bias, val=0)

    def forward(self, t, y):
        return self.net(y ** 3)


def odeint_rk4(func, y0, t):
    """Classic RK4 on the grid t; returns the solution at every grid point."""
    ys = [y0]
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        y = ys[i]
        k1 = func(t[i], y)
        k2 = func(t[i] + h / 2, y + h / 2 * k1)
        k3 = func(t[i] + h / 2, y + h / 2 * k2)
        k4 = func(t[i] + h, y + h * k3)
        ys.append(y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return torch.stack(ys)


def get_batch(cfg, true_y, t, gen):
    s = torch.randperm(cfg.data_size - cfg.batch_time, generator=gen)[:cfg.batch_size]
    batch_y0 = true_y[s]                                              # (M, 1, D)
    batch_t = t[:cfg.batch_time]                                      # (T)
    batch_y = torch.stack([true_y[s + i] for i in range(cfg.batch_time)], dim=0)  # (T, M, 1, D)
    return batch_y0, batch_t, batch_y


def evaluate(func, true_y0, t, true_y):
    with torch.no_grad():
        pred_y = odeint_rk4(func, true_y0, t)
        loss = torch.mean(torch.abs(pred_y - true_y))
    return loss.item(), pred_y[-1, 0]


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)

    true_y0 = torch.tensor([[2.0, 0.0]])
    t = torch.linspace(0.0, cfg.t_end, cfg.data_size)
    with torch.no_grad():
        true_y = odeint_rk4(Lambda(), true_y0, t)

    func = ODEFunc()
    optimizer = torch.optim.RMSprop(func.parameters(), lr=cfg.lr)
    print("config", asdict(cfg))
    for itr in range(1, cfg.niters + 1):
        optimizer.zero_grad()
        batch_y0, batch_t, batch_y = get_batch(cfg, true_y, t, gen)
        pred_y = odeint_rk4(func, batch_y0, batch_t)
        loss = torch.mean(torch.abs(pred_y - batch_y))
        loss.backward()
        optimizer.step()

        if itr % cfg.test_freq == 0:
            total, end = evaluate(func, true_y0, t, true_y)
            print(f"iter {itr:04d}  batch loss {loss.item():.4f}  total loss {total:.4f}  "
                  f"y(T) = ({end[0].item():.4f}, {end[1].item():.4f})")

    print(f"param checksum {sum(p.double().abs().sum().item() for p in func.parameters()):.4f}")


if __name__ == "__main__":
    main()
