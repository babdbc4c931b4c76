import math

import torch


def alpha(t):
    return torch.cos(0.5 * math.pi * t)


def sigma(t):
    return torch.sin(0.5 * math.pi * t)


T_MIN, T_MAX = 0.002, 0.9


def time_grid(n, t_min=T_MIN, t_max=T_MAX):
    return torch.linspace(t_min, t_max, n + 1)
