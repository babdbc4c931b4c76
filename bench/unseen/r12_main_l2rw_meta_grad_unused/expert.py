"""Learning to Reweight Examples for Robust Deep Learning (Ren et al., ICML 2018).

Per-example weights are obtained online from the gradient of a clean validation loss with
respect to perturbation weights eps, through one virtual SGD step of the classifier
(written with torch.func.functional_call instead of a hand-made MetaModule).
"""
import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


@dataclass
class Config:
    seed: int = 0
    n_train: int = 1024
    n_clean_val: int = 64
    n_test: int = 512
    label_noise: float = 0.4
    batch_size: int = 64
    epochs: int = 6
    lr: float = 0.05
    meta_lr: float = 0.05
    hidden: int = 32


def two_moons(n, g):
    t = torch.rand(n, generator=g) * math.pi
    y = torch.randint(0, 2, (n,), generator=g)
    x = torch.stack([torch.cos(t), torch.sin(t)], 1)
    x = torch.where(y.unsqueeze(1) == 1, torch.stack([1 - x[:, 0], 0.5 - x[:, 1]], 1), x)
    return x + 0.15 * torch.randn(n, 2, generator=g), y


def make_data(cfg):
    g = torch.Generator().manual_seed(cfg.seed)
    x_tr, y_clean = two_moons(cfg.n_train, g)
    flip = torch.rand(cfg.n_train, generator=g) < cfg.label_noise
    y_tr = torch.where(flip, 1 - y_clean, y_clean)          # 40 % symmetric label noise
    x_val, y_val = two_moons(cfg.n_clean_val, g)             # small trusted set
    x_te, y_te = two_moons(cfg.n_test, g)
    return (x_tr, y_tr, flip), (x_val, y_val), (x_te, y_te)


def reweight(model, x, y, x_val, y_val, meta_lr):
    params = dict(model.named_parameters())
    # line 4-5: weighted loss with eps = 0, virtual SGD step theta' = theta - a * grad
    eps = torch.zeros(x.size(0), requires_grad=True)
    cost = F.cross_entropy(functional_call(model, params, (x,)), y, reduction="none")
    l_f_meta = torch.sum(eps * cost)
    grads = torch.autograd.grad(l_f_meta, list(params.values()), create_graph=True)
    fast = {name: p - meta_lr * g for (name, p), g in zip(params.items(), grads)}
    # line 6-8: clean validation loss at theta', gradient w.r.t. eps
    l_g_meta = F.cross_entropy(functional_call(model, fast, (x_val,)), y_val)
    grad_eps = torch.autograd.grad(l_g_meta, eps)[0]
    # line 9-10: rectify and normalise
    w = torch.clamp(-grad_eps, min=0)
    norm = w.sum()
    return w / norm if norm > 0 else w


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=str(Path(__file__).with_name("l2rw.json")))
    cfg = Config(**json.loads(Path(p.parse_args().config).read_text()))

    torch.manual_seed(cfg.seed)
    (x_tr, y_tr, flip), (x_val, y_val), (x_te, y_te) = make_data(cfg)
    model = nn.Sequential(nn.Linear(2, cfg.hidden), nn.Tanh(), nn.Linear(cfg.hidden, cfg.hidden),
                          nn.Tanh(), nn.Linear(cfg.hidden, 2))
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    g = torch.Generator().manual_seed(cfg.seed + 1)

    for epoch in range(1, cfg.epochs + 1):
        perm = torch.randperm(cfg.n_train, generator=g)
        clean_mass, tot_loss, nb = 0.0, 0.0, 0
        for i in range(0, cfg.n_train, cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            x, y = x_tr[idx], y_tr[idx]
            w = reweight(model, x, y, x_val, y_val, cfg.meta_lr)
            cost = F.cross_entropy(model(x), y, reduction="none")
            loss = torch.sum(w * cost)
            opt.zero_grad()
            loss.backward()
            opt.step()
            clean_mass += w[~flip[idx]].sum().item()
            tot_loss += loss.item()
            nb += 1
        with torch.no_grad():
            acc = (model(x_te).argmax(1) == y_te).float().mean().item()
        print(f"epoch {epoch} weighted_loss {tot_loss / nb:.5f} "
              f"weight_on_clean {clean_mass / nb:.4f} test_acc {acc:.4f}")


if __name__ == "__main__":
    main()
