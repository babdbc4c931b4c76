"""Differentiable architecture search (DARTS, Liu et al. 2019) on a tabular task.

Bi-level optimisation: network weights w on the training split, architecture
logits alpha on the validation split, with the second-order (unrolled)
approximation of the architecture gradient.  The virtual step w' = w - xi*dL/dw
is evaluated with torch.func.functional_call instead of copying the model.
"""
import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

OPS = {
    "skip": lambda d: nn.Identity(),
    "lin_relu": lambda d: nn.Sequential(nn.Linear(d, d), nn.ReLU()),
    "lin_tanh": lambda d: nn.Sequential(nn.Linear(d, d), nn.Tanh()),
    "bottleneck": lambda d: nn.Sequential(nn.Linear(d, d // 4), nn.ReLU(), nn.Linear(d // 4, d)),
}


class MixedOp(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ops = nn.ModuleList(OPS[k](d) for k in OPS)

    def forward(self, x, weights):
        return sum(w * op(x) for w, op in zip(weights, self.ops))


class SearchNet(nn.Module):
    """stem -> node1 = e0(x) ; node2 = e1(x) + e2(node1) -> classifier"""

    def __init__(self, in_dim, hidden, n_classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(in_dim, hidden), nn.LayerNorm(hidden))
        self.edges = nn.ModuleList(MixedOp(hidden) for _ in range(3))
        self.classifier = nn.Linear(hidden, n_classes)
        self.alphas = nn.Parameter(1e-3 * torch.randn(3, len(OPS)))

    def weight_parameters(self):
        return [(n, p) for n, p in self.named_parameters() if n != "alphas"]

    def forward(self, x):
        w = F.softmax(self.alphas, dim=-1)
        s = self.stem(x)
        n1 = self.edges[0](s, w[0])
        n2 = self.edges[1](s, w[1]) + self.edges[2](n1, w[2])
        return self.classifier(F.relu(n2))

    def genotype(self):
        names = list(OPS)
        return [names[i] for i in self.alphas.argmax(-1).tolist()]


class DartsTrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.named_w = model.weight_parameters()
        self.weights = [p for _, p in self.named_w]
        self.w_optim = torch.optim.SGD(self.weights, lr=cfg["w_lr"], momentum=cfg["w_momentum"],
                                       weight_decay=cfg["w_weight_decay"])
        self.a_optim = torch.optim.Adam([model.alphas], lr=cfg["arch_lr"], betas=(0.5, 0.999),
                                        weight_decay=cfg["arch_weight_decay"])
        self.criterion = nn.CrossEntropyLoss()

    # ----- architecture gradient -------------------------------------------------
    def _virtual_step(self, loss_tr):
        """w' = w - xi * (momentum + dL_train/dw + wd * w), kept differentiable in w."""
        xi, mom, wd = self.cfg["w_lr"], self.cfg["w_momentum"], self.cfg["w_weight_decay"]
        grads = torch.autograd.grad(loss_tr, self.weights)
        unrolled = {}
        for (name, p), g in zip(self.named_w, grads):
            buf = self.w_optim.state[p].get("momentum_buffer")
            m = mom * buf if buf is not None else torch.zeros_like(p)
            unrolled[name] = p - xi * (m + g + wd * p)
        return unrolled

    def _hessian_vector_product(self, vector, x, y, r=1e-2):
        R = r / torch.cat([v.flatten() for v in vector]).norm()
        for p, v in zip(self.weights, vector):
            p.add_(v, alpha=R)
        g_pos = torch.autograd.grad(self.criterion(self.model(x), y), self.model.alphas)[0]
        for p, v in zip(self.weights, vector):
            p.sub_(v, alpha=2 * R)
        g_neg = torch.autograd.grad(self.criterion(self.model(x), y), self.model.alphas)[0]
        for p, v in zip(self.weights, vector):
            p.add_(v, alpha=R)
        return (g_pos - g_neg) / (2 * R)

    def _arch_grad(self, loss_tr, x_tr, y_tr, x_val, y_val):
        unrolled = self._virtual_step(loss_tr)
        loss_val = self.criterion(functional_call(self.model, unrolled, (x_val,)), y_val)
        names = list(unrolled)
        grads = torch.autograd.grad(loss_val, [self.model.alphas] + [unrolled[n] for n in names])
        dalpha, dw = grads[0], list(grads[1:])
        hvp = self._hessian_vector_product(dw, x_tr, y_tr)
        self.model.alphas.grad = dalpha - self.cfg["w_lr"] * hvp
        return loss_val.item()

    # ----- one search step -------------------------------------------------------
    def train_step(self, x_tr, y_tr, x_val, y_val):
        logits = self.model(x_tr)
        loss_tr = self.criterion(logits, y_tr)

        self.a_optim.zero_grad()
        val_loss = self._arch_grad(loss_tr, x_tr, y_tr, x_val, y_val)
        self.a_optim.step()

        self.w_optim.zero_grad()
        loss_tr.backward()
        nn.utils.clip_grad_norm_(self.weights, self.cfg["grad_clip"])
        self.w_optim.step()
        return loss_tr.item(), val_loss

    def fit(self, train, val, g):
        x_tr, y_tr = train
        x_va, y_va = val
        bs = self.cfg["batch_size"]
        for epoch in range(self.cfg["epochs"]):
            p_tr = torch.randperm(len(x_tr), generator=g)
            p_va = torch.randperm(len(x_va), generator=g)
            tl, vl, n = 0.0, 0.0, 0
            for i in range(0, len(x_tr), bs):
                it, iv = p_tr[i:i + bs], p_va[i:i + bs]
                a, b = self.train_step(x_tr[it], y_tr[it], x_va[iv], y_va[iv])
                tl, vl, n = tl + a, vl + b, n + 1
            with torch.no_grad():
                acc = (self.model(x_va).argmax(-1) == y_va).float().mean().item()
                probs = F.softmax(self.model.alphas, -1)
            print(f"epoch {epoch} train_loss {tl / n:.5f} unrolled_val_loss {vl / n:.5f} val_acc {acc:.5f}")
            print("  alpha " + " | ".join(" ".join(f"{v:.5f}" for v in row) for row in probs.tolist()))
        print(f"genotype {self.model.genotype()} |alpha| {self.model.alphas.norm():.5f}")


def make_data(cfg, g):
    n = cfg["n_train"] + cfg["n_val"]
    centers = 2.0 * torch.randn(cfg["n_classes"], cfg["in_dim"], generator=g)
    y = torch.randint(0, cfg["n_classes"], (n,), generator=g)
    x = centers[y] + 1.5 * torch.randn(n, cfg["in_dim"], generator=g)
    x = torch.tanh(x) + 0.1 * x ** 2 / (1 + x.abs())
    k = cfg["n_train"]
    return (x[:k], y[:k]), (x[k:], y[k:])


def main():
    cfg = json.loads(Path(__file__).with_name("darts.json").read_text())
    torch.manual_seed(cfg["seed"])
    g = torch.Generator().manual_seed(cfg["seed"])
    train, val = make_data(cfg, g)
    model = SearchNet(cfg["in_dim"], cfg["hidden"], cfg["n_classes"])
    DartsTrainer(model, cfg).fit(train, val, g)


if __name__ == "__main__":
    main()
