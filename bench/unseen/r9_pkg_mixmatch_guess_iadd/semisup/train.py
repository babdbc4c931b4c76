"""python -m semisup.train [--steps N]"""
import argparse
from pathlib import Path

import torch
import yaml

from .data import batches, two_spirals
from .mixmatch import mixmatch_losses
from .model import Classifier


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    return (model(x).argmax(1) == y).float().mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(Path(__file__).with_name("config.yaml")))
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    cfg = yaml.safe_load(open(args.config))
    if args.steps:
        cfg["optim"]["steps"] = args.steps

    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    d = cfg["data"]
    x_l, y_l = two_spirals(d["n_labeled"], d["noise"], gen)
    x_u, _ = two_spirals(d["n_unlabeled"], d["noise"], gen)
    x_v, y_v = two_spirals(d["n_val"], d["noise"], gen)
    labeled = batches(x_l, y_l, d["batch_size"], gen)
    unlabeled = batches(x_u, None, d["batch_size"], gen)

    model = Classifier(x_l.size(1), cfg["model"]["hidden"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["optim"]["lr"])
    mm = cfg["mixmatch"]
    for step in range(1, cfg["optim"]["steps"] + 1):
        model.train()
        (x, y), (u, _) = next(labeled), next(unlabeled)
        loss_x, loss_u = mixmatch_losses(model, x, y, u, cfg, gen)
        w_u = mm["lambda_u"] * min(1.0, step / mm["rampup_steps"])
        loss = loss_x + w_u * loss_u
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % cfg["optim"]["eval_every"] == 0:
            print(f"step {step:4d} loss_x {loss_x.item():.5f} loss_u {loss_u.item():.5f} "
                  f"val_acc {accuracy(model, x_v, y_v):.4f}")
    print(f"final weight norm {sum(p.norm() ** 2 for p in model.parameters()).sqrt().item():.5f}")


if __name__ == "__main__":
    main()
