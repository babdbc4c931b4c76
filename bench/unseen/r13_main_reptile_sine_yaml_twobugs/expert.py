"""Reptile meta-learning on random sine waves."""
import argparse
import math
from pathlib import Path

import torch
import torch.nn as nn
import yaml

HERE = Path(__file__).resolve().parent


def gen_task(gen):
    phase = float(torch.rand(1, generator=gen)) * 2 * math.pi
    ampl = 0.1 + float(torch.rand(1, generator=gen)) * 4.9
    return lambda x: torch.sin(x + phase) * ampl


def build_model(hidden):
    return nn.Sequential(nn.Linear(1, hidden), nn.Tanh(),
                         nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, 1))


def train_on_batch(model, x, y, inner_step_size):
    model.zero_grad()
    ypred = model(x)
    loss = (ypred - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= inner_step_size * param.grad
    return loss.item()


def reptile_update(model, weights_before, outer_step_size):
    with torch.no_grad():
        for p, p0 in zip(model.parameters(), weights_before):
            p.copy_(p0 + (p - p0) * outer_step_size)


def eval_adaptation(model, cfg, x_all, f, steps):
    """Loss on the full curve after `steps` SGD steps on 10 points, starting from the meta-init."""
    snapshot = [p.detach().clone() for p in model.parameters()]
    y_all = f(x_all)
    idx = torch.arange(0, x_all.shape[0], x_all.shape[0] // cfg["ntrain"])[:cfg["ntrain"]]
    losses = {}
    for k in range(steps + 1):
        with torch.no_grad():
            losses[k] = (model(x_all) - y_all).pow(2).mean().item()
        if k < steps:
            train_on_batch(model, x_all[idx], y_all[idx], cfg["inner_step_size"])
    with torch.no_grad():
        for p, s in zip(model.parameters(), snapshot):
            p.copy_(s)
    return losses


def main():
    parser = argparse.ArgumentParser(description="Reptile sine-wave demo")
    parser.add_argument("--config", default=str(HERE / "config.yaml"))
    parser.add_argument("--iterations", type=int, default=None)
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    if args.iterations is not None:
        cfg["iterations"] = args.iterations

    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    x_all = torch.linspace(-5, 5, 50).unsqueeze(1)
    f_test = gen_task(torch.Generator().manual_seed(1234))
    model = build_model(cfg["hidden"])

    for iteration in range(cfg["iterations"]):
        weights_before = [p.detach().clone() for p in model.parameters()]
        f = gen_task(gen)
        y_all = f(x_all)
        inds = torch.randperm(x_all.shape[0], generator=gen)
        for _ in range(cfg["inner_epochs"]):
            for start in range(0, x_all.shape[0], cfg["ntrain"]):
                mb = inds[start:start + cfg["ntrain"]]
                train_on_batch(model, x_all[mb], y_all[mb], cfg["inner_step_size"])
        outer = cfg["outer_step_size"] * (1 - iteration / cfg["iterations"])
        reptile_update(model, weights_before, outer)

        if (iteration + 1) % cfg["eval_every"] == 0:
            losses = eval_adaptation(model, cfg, x_all, f_test, cfg["eval_inner_steps"])
            k = cfg["eval_inner_steps"]
            print(f"iteration {iteration + 1:4d}  test loss before {losses[0]:.4f}  "
                  f"after 1 step {losses[1]:.4f}  after {k} steps {losses[k]:.4f}")

    print(f"param checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
