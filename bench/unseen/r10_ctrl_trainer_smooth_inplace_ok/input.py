"""Tabular classifier with label smoothing, written with many *legal* in-place operations.

    python input.py --config config.json
"""
import argparse
import copy
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm


class SquaredReLU(torch.autograd.Function):
    """relu(x)^2; saves its *input* only, so the caller may modify the output in place."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0).pow(2)

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x.clamp(min=0)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU(inplace=True),
                                  nn.Linear(width, width))

    def forward(self, x):
        return x + self.body(x)                     # out of place: `body` carries a backward hook


class Classifier(nn.Module):
    def __init__(self, in_dim, hidden, classes):
        super().__init__()
        self.inp = weight_norm(nn.Linear(in_dim, hidden))
        self.block = Block(hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        h = self.inp(x)
        h = SquaredReLU.apply(h)
        h.mul_(0.5)                                 # legal: SquaredReLU saved its input, not its output
        h = self.block(h)
        logits = self.head(h)
        logits[:, 0] -= 0.1                         # legal: addmm does not save its output
        return logits


def make_data(n, dim, classes, missing_rate, gen):
    protos = torch.randn(classes, dim, generator=torch.Generator().manual_seed(41))
    y = torch.randint(0, classes, (n,), generator=gen)
    x = protos[y] + 1.2 * torch.randn(n, dim, generator=gen)
    missing = torch.rand(n, dim, generator=gen) < missing_rate
    return x, missing, y


class Trainer:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.ema = copy.deepcopy(model).eval()
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
        self.grad_norms = []
        model.block.body.register_full_backward_hook(
            lambda m, gin, gout: self.grad_norms.append(gout[0].norm().item()))

    def smooth_targets(self, y):
        t = F.one_hot(y, self.cfg["classes"]).float()
        eps = self.cfg["label_smoothing"]
        t.mul_(1 - eps).add_(eps / self.cfg["classes"])    # legal: targets do not require grad
        return t

    def train_step(self, x, missing, y):
        self.model.train()
        x = x.clone()
        x[missing] = 0.0                                   # legal: input data, no grad
        with parametrize.cached():                         # one weight-norm evaluation per forward
            logits = self.model(x)
        loss = -(self.smooth_targets(y) * F.log_softmax(logits, dim=1)).sum(1).mean()
        self.opt.zero_grad()
        loss.backward()
        for p in self.model.parameters():
            p.grad.nan_to_num_(0.0)                        # legal: gradients are plain tensors
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["max_grad_norm"])
        self.opt.step()
        with torch.no_grad():                              # legal: EMA after the step
            for pe, pm in zip(self.ema.parameters(), self.model.parameters()):
                pe.mul_(self.cfg["ema_decay"]).add_(pm, alpha=1 - self.cfg["ema_decay"])
            for be, bm in zip(self.ema.buffers(), self.model.buffers()):
                be.copy_(bm)
        return loss.item()

    @torch.no_grad()
    def evaluate(self, model, x, missing, y):
        model.eval()
        x = x.masked_fill(missing, 0.0)
        logits = model(x)
        return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()

    def fit(self, train, val, gen):
        x, missing, y = train
        for epoch in range(self.cfg["epochs"]):
            perm = torch.randperm(x.size(0), generator=gen)
            losses = [self.train_step(x[i], missing[i], y[i]) for i in perm.split(self.cfg["batch_size"])]
            vl, va = self.evaluate(self.model, *val)
            el, ea = self.evaluate(self.ema, *val)
            gn = sum(self.grad_norms) / len(self.grad_norms)
            self.grad_norms.clear()
            print(f"epoch {epoch} train {sum(losses) / len(losses):.5f} val {vl:.5f}/{va:.4f} "
                  f"ema {el:.5f}/{ea:.4f} grad@block {gn:.5f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="config.json")
    args = p.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    train = make_data(cfg["n_train"], cfg["in_dim"], cfg["classes"], cfg["missing_rate"], gen)
    val = make_data(cfg["n_val"], cfg["in_dim"], cfg["classes"], cfg["missing_rate"], gen)
    model = Classifier(cfg["in_dim"], cfg["hidden"], cfg["classes"])
    Trainer(model, cfg).fit(train, val, gen)
    g = model.inp.parametrizations.weight.original0
    print(f"weight-norm g mean {g.mean().item():.5f} head norm {model.head.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
