import math
import os

import torch
import yaml


def load_config(name="config.yaml"):
    with open(os.path.join(os.path.dirname(__file__), name)) as f:
        return yaml.safe_load(f)


def make_dataset(n_train, n_test, length, num_classes, seed):
    """Noisy damped sinusoids; the class is the frequency band."""
    g = torch.Generator().manual_seed(seed)
    n = n_train + n_test
    y = torch.arange(n) % num_classes
    freq = (y.float() + 1.0 + 0.3 * torch.rand(n, generator=g)) * 2 * math.pi / 16
    phase = 2 * math.pi * torch.rand(n, generator=g)
    t = torch.arange(length).float()
    x = torch.sin(freq[:, None] * t + phase[:, None]) * torch.exp(-0.01 * t)
    x = x + 0.3 * torch.randn(n, length, generator=g)
    perm = torch.randperm(n, generator=g)
    x, y = x[perm].unsqueeze(-1), y[perm]
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def param_groups(model, lr, ssm_lr):
    """SSM parameters get their own (smaller) learning rate and no weight decay, as in S4."""
    ssm, rest = [], []
    for name, p in model.named_parameters():
        (ssm if getattr(p, "_is_ssm", False) else rest).append(p)
    return [{"params": rest, "lr": lr}, {"params": ssm, "lr": ssm_lr, "weight_decay": 0.0}]
