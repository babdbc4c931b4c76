"""Multi-task regression with GradNorm loss balancing (Chen et al., ICML 2018).

    python input.py --config gradnorm.json
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskNet(nn.Module):
    def __init__(self, in_dim, hidden, n_tasks):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.heads = nn.ModuleList(nn.Linear(hidden, 1) for _ in range(n_tasks))

    def shared_weight(self):
        """Last shared layer: GradNorm measures each task's gradient norm here."""
        return self.trunk[2].weight

    def forward(self, x):
        h = self.trunk(x)
        return [head(h).squeeze(-1) for head in self.heads]


def make_tasks(n, in_dim, scales, gen):
    x = torch.randn(n, in_dim, generator=gen)
    a, b, c = torch.randn(3, in_dim, generator=torch.Generator().manual_seed(11))
    ys = torch.stack([torch.sin(x @ a), (x @ b).abs() / in_dim ** 0.5, torch.tanh(x @ c) + 0.3 * x[:, 0]], 1)
    ys = ys * torch.tensor(scales) + 0.05 * torch.randn(n, 3, generator=gen)
    return x, ys


class GradNormTrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.n_tasks = len(model.heads)
        self.task_w = nn.Parameter(torch.ones(self.n_tasks))
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
        self.opt_w = torch.optim.Adam([self.task_w], lr=cfg["weight_lr"])
        self.initial_losses = None

    def train_step(self, x, ys):
        preds = self.model(x)
        losses = torch.stack([F.mse_loss(p, ys[:, i]) for i, p in enumerate(preds)])
        if self.initial_losses is None:
            self.initial_losses = losses.detach()
        weighted = (self.task_w * losses).sum()

        self.opt.zero_grad()
        weighted.backward(retain_graph=True)
        self.opt.step()

        # GradNorm: gradient norm of each weighted task loss at the last shared layer
        W = self.model.shared_weight()
        norms = torch.stack([
            torch.autograd.grad(self.task_w[i] * losses[i], W, retain_graph=True, create_graph=True)[0].norm()
            for i in range(self.n_tasks)])
        ratios = losses.detach() / self.initial_losses
        inverse_rate = ratios / ratios.mean()
        target = (norms.mean() * inverse_rate ** self.cfg["alpha"]).detach()
        gn_loss = (norms - target).abs().sum()
        self.opt_w.zero_grad()
        self.task_w.grad = torch.autograd.grad(gn_loss, self.task_w)[0]
        self.opt_w.step()
        # renormalise so that the weights sum to the number of tasks
        self.task_w.mul_(self.n_tasks / self.task_w.sum())
        return losses.detach(), gn_loss.item()

    def evaluate(self, x, ys):
        with torch.no_grad():
            preds = self.model(x)
            return [F.mse_loss(p, ys[:, i]).item() for i, p in enumerate(preds)]

    def fit(self, train, val, epochs, batch_size, gen):
        x, ys = train
        for epoch in range(epochs):
            perm = torch.randperm(x.size(0), generator=gen)
            tot, gn_tot, n = torch.zeros(self.n_tasks), 0.0, 0
            for i in range(0, x.size(0), batch_size):
                idx = perm[i:i + batch_size]
                losses, gn = self.train_step(x[idx], ys[idx])
                tot += losses
                gn_tot += gn
                n += 1
            val_mse = self.evaluate(*val)
            print(f"epoch {epoch} train " + " ".join(f"{v:.5f}" for v in (tot / n).tolist())
                  + f" gradnorm_loss {gn_tot / n:.5f} | val " + " ".join(f"{v:.5f}" for v in val_mse))
            print("  task weights " + " ".join(f"{w:.4f}" for w in self.task_w.tolist()))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="gradnorm.json")
    p.add_argument("--epochs", type=int, default=None)
    args = p.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    if args.epochs is not None:
        cfg["epochs"] = args.epochs

    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    train = make_tasks(cfg["n_train"], cfg["in_dim"], cfg["task_scales"], gen)
    val = make_tasks(256, cfg["in_dim"], cfg["task_scales"], gen)
    model = MultiTaskNet(cfg["in_dim"], cfg["hidden"], len(cfg["task_scales"]))
    trainer = GradNormTrainer(model, cfg)
    print("initial val mse " + " ".join(f"{v:.5f}" for v in trainer.evaluate(*val)))
    trainer.fit(train, val, cfg["epochs"], cfg["batch_size"], gen)


if __name__ == "__main__":
    main()
