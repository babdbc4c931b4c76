"""ALBERT-style classifier: one Switch-MoE feed-forward block shared across depth.
The load-balancing loss is collected by a decorator around the loss function."""
import argparse
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


class AuxLossMixin:
    """Modules that produce auxiliary losses during forward."""

    def init_aux(self):
        self.aux_losses = []

    def add_aux_loss(self, loss):
        self.aux_losses.append(loss)


def make_expert(d, hidden):
    return nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))


class SwitchFFN(AuxLossMixin, nn.Module):
    def __init__(self, d, n_experts, expert_factory):
        super().__init__()
        self.init_aux()
        self.router = nn.Linear(d, n_experts)
        self.experts = nn.ModuleList(expert_factory() for _ in range(n_experts))

    def forward(self, x):
        probs = self.router(x).softmax(dim=-1)
        gate, idx = probs.max(dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            sel = idx == e
            if sel.any():
                out[sel] = gate[sel, None] * expert(x[sel])
        frac = F.one_hot(idx, len(self.experts)).float().mean(0)
        # Switch Transformer load-balancing loss
        self.add_aux_loss(len(self.experts) * (frac * probs.mean(0)).sum())
        return x + out


class SharedMoENet(nn.Module):
    def __init__(self, in_dim, d, classes, n_experts, hidden, depth):
        super().__init__()
        self.inp = nn.Linear(in_dim, d)
        self.block = SwitchFFN(d, n_experts, functools.partial(make_expert, d, hidden))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)
        self.depth = depth

    def forward(self, x):
        h = self.inp(x)
        for _ in range(self.depth):  # the same block is applied `depth` times
            h = self.norm(self.block(h))
        return self.head(h)


def with_aux_loss(model, coef):
    """Decorator: adds the auxiliary losses of all AuxLossMixin modules to the task loss."""
    aux_modules = [m for m in model.modules() if isinstance(m, AuxLossMixin)]

    def deco(loss_fn):
        @functools.wraps(loss_fn)
        def wrapped(*args, **kwargs):
            task = loss_fn(*args, **kwargs)
            aux = sum(l for m in aux_modules for l in m.aux_losses)
            for m in aux_modules:  # consumed: the next step starts a fresh list
                m.aux_losses.clear()
            return task, aux, task + coef * aux
        return wrapped
    return deco


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--aux-coef", type=float, default=0.1)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    return p.parse_args()


def make_data(n=384, d=10, k=4):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(n, d, generator=g)
    w = torch.randn(d, k, generator=g)
    y = (x @ w + 0.5 * torch.sin(3 * x[:, :k])).argmax(1)
    return x, y


def main():
    args = parse_args()
    torch.manual_seed(0)
    x, y = make_data()
    model = SharedMoENet(x.shape[1], args.dim, int(y.max()) + 1, args.experts, args.hidden, args.depth)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    @with_aux_loss(model, args.aux_coef)
    def compute_loss(xb, yb):
        return F.cross_entropy(model(xb), yb)

    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(x.shape[0])
        for i in range(0, x.shape[0], args.batch):
            idx = perm[i:i + args.batch]
            task, aux, loss = compute_loss(x[idx], y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 6 == 0:
                print(f"step {step:3d} task {task.item():.5f} aux {aux.item():.5f}")
    with torch.no_grad():
        h = model.inp(x)
        usage = F.one_hot(model.block.router(h).argmax(-1), args.experts).float().mean(0)
        acc = (model(x).argmax(1) == y).float().mean().item()
    print("expert usage " + " ".join(f"{u:.4f}" for u in usage.tolist()))
    print(f"train acc {acc:.4f} router norm {model.block.router.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
