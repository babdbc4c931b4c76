"""Multi-task regression with a hypernetwork generating a target MLP per task."""
import argparse

import torch
import torch.nn.functional as F

from hyperreg.hypernet import HyperNetwork
from hyperreg.tasks import make_tasks, split


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n-tasks", type=int, default=16)
    p.add_argument("--n-points", type=int, default=96)
    p.add_argument("--n-train", type=int, default=64)
    p.add_argument("--tasks-per-batch", type=int, default=4)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    x, y = make_tasks(args.n_tasks, args.n_points, g)
    (xtr, ytr), (xte, yte) = split(x, y, args.n_train)
    model = HyperNetwork(args.n_tasks)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    all_ids = torch.arange(args.n_tasks)

    for epoch in range(args.epochs):
        order = torch.randperm(args.n_tasks, generator=g)
        total = 0.0
        for i in range(0, args.n_tasks, args.tasks_per_batch):
            ids = order[i:i + args.tasks_per_batch]
            pred = model(ids, xtr[ids])
            loss = F.mse_loss(pred, ytr[ids])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(ids)
        if epoch % 10 == 9:
            with torch.no_grad():
                test = F.mse_loss(model(all_ids, xte), yte).item()
            print(f"epoch {epoch} train_mse {total / args.n_tasks:.5f} test_mse {test:.5f}")

    with torch.no_grad():
        per_task = (model(all_ids, xte) - yte).pow(2).mean((1, 2))
    print(f"worst task mse {per_task.max():.5f} best {per_task.min():.5f} "
          f"|emb| {model.task_emb.weight.norm():.5f} |head| {model.head.weight.norm():.5f}")


if __name__ == "__main__":
    main()
