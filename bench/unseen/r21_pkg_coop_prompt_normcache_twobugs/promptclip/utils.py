import os

import torch
import yaml


def load_config(name="config.yaml"):
    with open(os.path.join(os.path.dirname(__file__), name)) as f:
        return yaml.safe_load(f)


def l2_normalize_(x):
    """Unit-normalise features along the last dim (as in the CLIP zero-shot notebook)."""
    x /= x.norm(dim=-1, keepdim=True)
    return x


def make_dataset(num_classes, img_dim, n_train, n_test, seed):
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(num_classes, img_dim, generator=g)
    n = n_train + n_test
    y = torch.arange(n) % num_classes
    x = protos[y] + 0.8 * torch.randn(n, img_dim, generator=g)
    perm = torch.randperm(n, generator=g)
    x, y = x[perm], y[perm]
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def class_name_tokens(num_classes):
    # every class name is two word pieces; token 0 is the EOS token
    return torch.stack([2 * torch.arange(num_classes) + 1, 2 * torch.arange(num_classes) + 2], dim=1)
