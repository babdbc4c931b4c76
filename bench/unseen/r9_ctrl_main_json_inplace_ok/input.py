"""Supervised classifier with an auxiliary SimCLR-style contrastive loss and an EMA copy for eval.

Deliberately written with many in-place operations (all of them legal for autograd).
"""
import argparse
import copy
import json

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualMLP(nn.Module):
    def __init__(self, in_dim, hidden, n_classes, proj_dim):
        super().__init__()
        self.inp = nn.Linear(in_dim, hidden)
        self.bn = nn.BatchNorm1d(hidden)
        self.fc1 = nn.Linear(hidden, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.cls = nn.Linear(hidden, n_classes)
        self.proj = nn.Linear(hidden, proj_dim)
        self.feature_scale = 1.0
        # forward hook rescales the projection output in place: Linear does not save its output
        self.proj.register_forward_hook(lambda m, i, out: out.mul_(self.feature_scale))

    def forward(self, x):
        h = self.bn(self.inp(x))
        h.relu_()                              # BatchNorm saves its input, not its output
        r = self.fc2(F.relu(self.fc1(h), inplace=True))
        r += h                                 # r is a fresh Linear output
        h = self.norm(r)
        return self.cls(h), self.proj(h)


def nt_xent(z1, z2, temperature):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t()
    sim.fill_diagonal_(float("-inf"))         # mm does not save its output
    sim /= temperature
    n = z1.size(0)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


def augment(x, cutout, gen):
    x = x + 0.1 * torch.randn(x.shape, generator=gen)
    start = torch.randint(0, x.size(1) - cutout, (1,), generator=gen).item()
    x[:, start:start + cutout] = 0.0            # x is a fresh tensor that needs no grad
    return x


def make_data(cfg, gen):
    d = cfg["data"]
    n = d["n_train"] + d["n_val"]
    centers = torch.randn(d["n_classes"], d["in_dim"], generator=gen) * 1.5
    y = torch.randint(0, d["n_classes"], (n,), generator=gen)
    x = centers[y] + torch.randn(n, d["in_dim"], generator=gen)
    return (x[: d["n_train"]], y[: d["n_train"]]), (x[d["n_train"]:], y[d["n_train"]:])


@torch.no_grad()
def ema_update(ema, model, decay):
    for pe, p in zip(ema.parameters(), model.parameters()):
        pe.mul_(decay).add_(p, alpha=1 - decay)
    for be, b in zip(ema.buffers(), model.buffers()):
        be.copy_(b)


@torch.no_grad()
def evaluate(model, x, y):
    model.eval()
    logits, _ = model(x)
    probs = logits.detach().softmax(1)
    probs.clamp_(min=1e-6)                      # in place on a detached copy for the entropy stat
    entropy = -(probs * probs.log()).sum(1).mean().item()
    return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item(), entropy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="config.json")
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    (x_tr, y_tr), (x_va, y_va) = make_data(cfg, gen)
    d, m, t = cfg["data"], cfg["model"], cfg["train"]
    model = ResidualMLP(d["in_dim"], m["hidden"], d["n_classes"], m["proj_dim"])
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=t["lr"], weight_decay=0.01)

    for epoch in range(t["epochs"]):
        model.train()
        perm = torch.randperm(x_tr.size(0), generator=gen)
        running = torch.zeros(2)
        for i in range(0, x_tr.size(0), d["batch_size"]):
            idx = perm[i:i + d["batch_size"]]
            x, y = x_tr[idx], y_tr[idx]
            logits1, z1 = model(augment(x, t["cutout"], gen))
            _, z2 = model(augment(x, t["cutout"], gen))
            ce = F.cross_entropy(logits1, y)
            con = nt_xent(z1, z2, t["temperature"])
            loss = ce + t["contrast_weight"] * con
            opt.zero_grad(set_to_none=False)
            loss.backward()
            for p in model.parameters():
                p.grad.nan_to_num_(0.0)
            torch.nn.utils.clip_grad_norm_(model.parameters(), t["clip_norm"])
            opt.step()
            ema_update(ema, model, t["ema_decay"])
            running += torch.tensor([ce.item(), con.item()])
        running /= (x_tr.size(0) + d["batch_size"] - 1) // d["batch_size"]
        vl, va, ent = evaluate(model, x_va, y_va)
        el, ea, _ = evaluate(ema, x_va, y_va)
        print(f"epoch {epoch} ce {running[0]:.5f} contrast {running[1]:.5f} | val {vl:.5f} acc {va:.4f} "
              f"entropy {ent:.4f} | ema val {el:.5f} acc {ea:.4f}")
    print(f"bn running_mean norm {model.bn.running_mean.norm().item():.5f}")


if __name__ == "__main__":
    main()
