import os

import torch


def make_data(n, d, k, seed):
    g = torch.Generator().manual_seed(seed)
    centers = 0.6 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    x = centers[y] + torch.randn(n, d, generator=g)
    return x, y


def accuracy(logits, y):
    return (logits.argmax(-1) == y).float().mean().item()


def save_checkpoint(model, opt, epoch, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.save({"epoch": epoch, "model": model.state_dict(), "opt": opt.state_dict()},
               os.path.join(out_dir, "qat_last.pt"))


def checksum(model):
    return sum(p.double().sum() for p in model.parameters()).item()
