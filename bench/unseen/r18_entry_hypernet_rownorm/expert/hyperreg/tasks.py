"""A family of 1-D regression tasks y = a * sin(b * x + c) + d * x."""
import torch


def make_tasks(n_tasks, n_points, g):
    a = 0.5 + 1.5 * torch.rand(n_tasks, 1, generator=g)
    b = 0.8 + 1.2 * torch.rand(n_tasks, 1, generator=g)
    c = 3.14 * torch.rand(n_tasks, 1, generator=g)
    d = 0.3 * torch.randn(n_tasks, 1, generator=g)
    x = torch.rand(n_tasks, n_points, generator=g) * 8 - 4
    y = a * torch.sin(b * x + c) + d * x + 0.05 * torch.randn(n_tasks, n_points, generator=g)
    return x.unsqueeze(-1), y.unsqueeze(-1)


def split(x, y, n_train):
    return (x[:, :n_train], y[:, :n_train]), (x[:, n_train:], y[:, n_train:])
