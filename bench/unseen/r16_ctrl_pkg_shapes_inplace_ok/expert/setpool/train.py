import copy

import torch
import torch.nn.functional as F

from .config import load
from .model import SetClassifier


def make_data(dc):
    g = torch.Generator().manual_seed(4)
    n, L, f = dc["n"], dc["max_len"], dc["feat"]
    x = torch.randn(n, L, f, generator=g)
    lengths = torch.randint(3, L + 1, (n,), generator=g)
    pad = torch.arange(L)[None, :] >= lengths[:, None]
    x[pad] = 0.0                                   # legal: data tensor, no grad
    y = ((x[..., 0].sum(1) > 0).long() + (x[..., 1].sum(1) > 1).long()).clamp_(max=dc["classes"] - 1)
    return x, pad, y


def batches(x, pad, y, batch, gen):
    """Generator with a reused buffer; the buffer never requires grad."""
    xbuf = torch.empty(batch, *x.shape[1:])
    while True:
        perm = torch.randperm(x.shape[0], generator=gen)
        for i in range(0, x.shape[0] - batch + 1, batch):
            idx = perm[i:i + batch]
            xbuf.copy_(x[idx])
            xbuf.mul_(1.0 + 0.05 * torch.randn(batch, 1, 1, generator=gen))  # legal augmentation
            yield xbuf, pad[idx], y[idx]


class LossMeter:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def on_batch_end(self, loss):
        self.total += loss.item()
        self.count += 1

    def on_epoch_end(self, epoch):
        print(f"epoch {epoch} mean loss {self.total / self.count:.5f}")
        self.total, self.count = 0.0, 0


def make_step(model, ema, opt, tc):
    state = {"prev": None}

    def step(xb, pad, yb):
        logits = model(xb, pad)
        loss = F.cross_entropy(logits, yb)
        if state["prev"] is not None:              # consistency with last step's (detached) logits mean
            loss = loss + 0.01 * (logits.mean(0) - state["prev"]).pow(2).sum()
        state["prev"] = logits.mean(0).detach()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1 - tc["lr"] * tc["wd"])
            for blk in model.blocks.values():
                w = blk.fc.weight
                w.div_(w.norm(dim=1, keepdim=True).clamp_(min=tc["max_norm"]) / tc["max_norm"])
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.mul_(tc["ema"]).add_(pm, alpha=1 - tc["ema"])
        return loss

    return step


def main():
    cfg = load()
    torch.manual_seed(cfg["seed"])
    x, pad, y = make_data(cfg["data"])
    model = SetClassifier(cfg["data"]["feat"], cfg["data"]["classes"], cfg["model"])
    ema = copy.deepcopy(model).requires_grad_(False)
    tc = cfg["train"]
    opt = torch.optim.Adam(model.parameters(), lr=tc["lr"])
    step = make_step(model, ema, opt, tc)
    meter = LossMeter()
    stream = batches(x, pad, y, tc["batch"], torch.Generator().manual_seed(1))
    per_epoch = x.shape[0] // tc["batch"]
    n = 0
    for epoch in range(tc["epochs"]):
        for _ in range(per_epoch):
            loss = step(*next(stream))
            meter.on_batch_end(loss)
            n += 1
            if n % tc["log_every"] == 0:
                print(f"step {n:3d} loss {loss.item():.5f}")
        meter.on_epoch_end(epoch)
    with torch.no_grad():
        acc = (model(x, pad).argmax(1) == y).float().mean().item()
        acc_ema = (ema(x, pad).argmax(1) == y).float().mean().item()
    print(f"acc {acc:.4f} ema-acc {acc_ema:.4f}")


if __name__ == "__main__":
    main()
