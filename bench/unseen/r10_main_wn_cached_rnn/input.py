"""Adding problem with a weight-normalised Elman RNN (parametrizations.weight_norm on weight_hh).

    python input.py --config config.yaml
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm


class WNRNN(nn.Module):
    def __init__(self, hidden, use_wn=True):
        super().__init__()
        self.cell = nn.RNNCell(2, hidden, nonlinearity="tanh")
        if use_wn:
            weight_norm(self.cell, "weight_hh")
        self.readout = nn.Linear(hidden, 1)

    def forward(self, x):
        h = x.new_zeros(x.size(0), self.cell.hidden_size)
        for t in range(x.size(1)):
            # each access to cell.weight_hh recomputes g * v / ||v|| unless a cache is active
            h = self.cell(x[:, t], h)
        return self.readout(h).squeeze(-1)


def adding_problem(n, seq_len, gen):
    vals = torch.rand(n, seq_len, generator=gen)
    marks = torch.zeros(n, seq_len)
    # short-memory variant: both marked positions fall in the last quarter of the sequence
    first = torch.randint(seq_len - seq_len // 4, seq_len - seq_len // 8, (n,), generator=gen)
    second = torch.randint(seq_len - seq_len // 8, seq_len, (n,), generator=gen)
    marks[torch.arange(n), first] = 1.0
    marks[torch.arange(n), second] = 1.0
    y = (vals * marks).sum(1)
    return torch.stack([vals, marks], -1), y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="config.yaml")
    args = p.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    d, m, o = cfg["data"], cfg["model"], cfg["optim"]
    x_tr, y_tr = adding_problem(d["n_train"], d["seq_len"], gen)
    x_va, y_va = adding_problem(d["n_val"], d["seq_len"], gen)
    model = WNRNN(m["hidden"], m["weight_norm_hh"])
    opt = torch.optim.Adam(model.parameters(), lr=o["lr"])
    print(f"baseline val mse {F.mse_loss(torch.full_like(y_va, y_tr.mean().item()), y_va).item():.5f}")

    # share one weight_hh computation across all time steps (and batches) instead of recomputing it
    with parametrize.cached():
        for epoch in range(o["epochs"]):
            model.train()
            perm = torch.randperm(x_tr.size(0), generator=gen)
            total = 0.0
            for i in range(0, x_tr.size(0), o["batch_size"]):
                idx = perm[i:i + o["batch_size"]]
                loss = F.mse_loss(model(x_tr[idx]), y_tr[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += loss.item() * len(idx)
            model.eval()
            with torch.no_grad():
                val = F.mse_loss(model(x_va), y_va).item()
            w_hh = model.cell.weight_hh.detach()
            print(f"epoch {epoch} train_mse {total / x_tr.size(0):.5f} val_mse {val:.5f} w_hh_norm {w_hh.norm().item():.5f}")


if __name__ == "__main__":
    main()
