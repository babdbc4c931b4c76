"""Top-2 mixture-of-experts classifier trained with Hugging Face accelerate (CPU).
Routing: softmax over all experts -> keep top-k -> renormalise over the kept experts."""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {
    "in_dim": 12, "d": 24, "classes": 5, "experts": 6, "top_k": 2,
    "expert": "glu", "hidden": 32,
    "epochs": 3, "batch": 32, "accum": 2, "lr": 3e-3, "aux_coef": 0.05,
}


class GLUExpert(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.up = nn.Linear(d, 2 * hidden)
        self.down = nn.Linear(hidden, d)

    def forward(self, x):
        a, b = self.up(x).chunk(2, dim=-1)
        return self.down(a * torch.sigmoid(b))


EXPERTS = {
    "mlp": lambda d, hidden: nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)),
    "glu": GLUExpert,
}


class TopKRoutingMixin:
    def route(self, logits, k):
        probs = logits.softmax(dim=-1)
        _, top = probs.topk(k, dim=-1)
        # load-balancing loss (Switch/GShard): importance x load, on the full softmax
        n_exp = probs.shape[-1]
        load = F.one_hot(top, n_exp).sum(1).float().mean(0) / k
        aux = n_exp * (probs.mean(0) * load).sum()
        dropped = torch.ones_like(probs, dtype=torch.bool).scatter_(-1, top, False)
        probs = probs.masked_fill(dropped, 0.0)     # keep the top-k experts only
        probs = probs / probs.sum(dim=-1, keepdim=True)  # renormalise over the kept experts
        return probs, aux


class MoEClassifier(TopKRoutingMixin, nn.Module):
    def __init__(self, cfg):
        super().__init__()
        factory = partial(EXPERTS[cfg["expert"]], cfg["d"], cfg["hidden"])
        self.inp = nn.Linear(cfg["in_dim"], cfg["d"])
        self.router = nn.Linear(cfg["d"], cfg["experts"])
        self.experts = nn.ModuleList(factory() for _ in range(cfg["experts"]))
        self.head = nn.Linear(cfg["d"], cfg["classes"])
        self.k = cfg["top_k"]

    def forward(self, x):
        h = F.gelu(self.inp(x))
        w, aux = self.route(self.router(h), self.k)               # (B, E)
        outs = torch.stack([e(h) for e in self.experts], 1)    # (B, E, d)
        h = h + (w.unsqueeze(-1) * outs).sum(1)
        return self.head(h), w, aux


def make_data(cfg, n=640):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n, cfg["in_dim"], generator=g)
    centers = torch.randn(cfg["classes"], cfg["in_dim"], generator=g)
    y = (-(x[:, None, :] - centers[None]).pow(2).sum(-1) + 0.5 * x[:, :1] * x[:, 1:2]).argmax(1)
    return x, y


def main():
    cfg = CONFIG
    set_seed(0)
    accelerator = Accelerator(cpu=True, gradient_accumulation_steps=cfg["accum"])
    x, y = make_data(cfg)
    loader = DataLoader(TensorDataset(x, y), batch_size=cfg["batch"], shuffle=True)
    model = MoEClassifier(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    model, opt, loader = accelerator.prepare(model, opt, loader)
    step = 0
    for epoch in range(cfg["epochs"]):
        model.train()
        for xb, yb in loader:
            with accelerator.accumulate(model):
                logits, w, aux = model(xb)
                loss = F.cross_entropy(logits, yb) + cfg["aux_coef"] * aux
                accelerator.backward(loss)
                opt.step()
                opt.zero_grad()
            step += 1
            if step % 10 == 0:
                load = (w > 0).float().mean(0)
                print(f"epoch {epoch} step {step:3d} loss {loss.item():.5f} "
                      f"max-load {load.max().item():.4f}")
    model.eval()
    with torch.no_grad():
        logits, w, _ = model(x)
        acc = (logits.argmax(1) == y).float().mean().item()
        usage = " ".join(f"{v:.4f}" for v in w.mean(0).tolist())
    print(f"train acc {acc:.4f}")
    print(f"mean gate per expert {usage}")
    print(f"router weight norm {model.router.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
