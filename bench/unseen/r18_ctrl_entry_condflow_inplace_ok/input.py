"""Conditional normalising flow p(y | x) on a heteroscedastic, group-structured 2-D task.

Control script: every in-place operation here is legal for autograd.
"""
import argparse

import torch
import torch.nn as nn

from condflow.layers import ConditionalFlow
from condflow.training import EMA, GroupWeights, diversity_penalty


def make_data(n, g):
    groups = torch.randint(0, 3, (n,), generator=g)
    x = torch.randn(n, 3, generator=g) + groups[:, None].float()
    mean = torch.stack([torch.sin(x[:, 0]), x[:, 1] * 0.5 - x[:, 2] * 0.2], 1)
    scale = 0.1 + 0.3 * (groups == 2).float()[:, None]
    eps = torch.randn(n, 2, generator=g)
    eps[:, 1] += 0.8 * eps[:, 0] ** 2 - 0.8                 # banana-shaped noise
    return x, mean + scale * eps, groups


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1536)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    x, y, groups = make_data(args.n, g)
    n_tr = int(0.8 * args.n)
    embed = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 8))
    flow = ConditionalFlow(cond_dim=8)
    params = list(embed.parameters()) + list(flow.parameters())
    opt = torch.optim.Adam(params, lr=args.lr)
    gw = GroupWeights(3, eta=0.05)
    with torch.no_grad():
        flow.log_prob(y[:512], embed(x[:512]))               # ActNorm data-dependent init
    ema = EMA(flow, decay=0.9)
    history = torch.zeros(args.epochs, 2)

    for epoch in range(args.epochs):
        perm = torch.randperm(n_tr, generator=g)
        tot, nb = 0.0, 0
        for i in range(0, n_tr, args.batch_size):
            idx = perm[i:i + args.batch_size]
            c = embed(x[idx])
            nll = -flow.log_prob(y[idx], c)
            loss, group_loss = gw.weighted(nll, groups[idx])
            loss = loss + 0.01 * diversity_penalty(c)
            opt.zero_grad()
            loss.backward()
            opt.step()
            gw.update(group_loss)
            ema.update(flow)
            tot += loss.item()
            nb += 1
        with torch.no_grad():
            c_va = embed(x[n_tr:])
            val = -flow.log_prob(y[n_tr:], c_va).mean()
            val_ema = -ema.shadow.log_prob(y[n_tr:], c_va).mean()
        history[epoch, 0] = val
        history[epoch, 1] = val_ema
        print(f"epoch {epoch} train {tot / nb:.5f} val_nll {val:.5f} val_nll_ema {val_ema:.5f} "
              f"group_w {' '.join(f'{v:.5f}' for v in gw.w.tolist())}")
    print(f"best val {history[:, 0].min():.5f} |flow| {torch.cat([q.flatten() for q in flow.parameters()]).norm():.5f}")


if __name__ == "__main__":
    main()
