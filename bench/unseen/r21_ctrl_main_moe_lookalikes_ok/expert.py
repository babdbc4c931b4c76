"""Top-2 mixture-of-experts sequence classifier (token dropout, load-balancing loss, EMA copy)."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    seed: int = 0
    vocab: int = 32
    n_classes: int = 5
    d: int = 24
    n_experts: int = 4
    top_k: int = 2
    seq_len: int = 10
    n_train: int = 96
    batch: int = 16
    epochs: int = 5
    lr: float = 5e-3
    wd: float = 0.05
    aux_weight: float = 0.01
    ema: float = 0.9


class Expert(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class MoELayer(nn.Module):
    def __init__(self, d, n_experts, top_k):
        super().__init__()
        self.router = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList([Expert(d) for _ in range(n_experts)])
        self.bias = nn.Parameter(torch.zeros(d))
        self.top_k = top_k
        self.register_buffer("load", torch.zeros(n_experts))
        self.n_experts = n_experts

    def forward(self, x, pad_mask):
        N, d = x.shape
        logits = self.router(x)
        logits[pad_mask] = 0.0                      # padding tokens: uniform routing
        probs = logits.softmax(-1)
        topv, topi = probs.topk(self.top_k, dim=-1)
        topv = topv / topv.sum(-1, keepdim=True)    # renormalise the top-k gates
        out = torch.zeros(N, d)
        for e in range(self.n_experts):
            rows, slot = (topi == e).nonzero(as_tuple=True)
            if rows.numel() == 0:
                continue
            y = self.experts[e](x[rows]) * topv[rows, slot].unsqueeze(-1)
            out.index_add_(0, rows, y)
        out += self.bias
        with torch.no_grad():
            self.load += F.one_hot(topi[:, 0], self.n_experts).float().sum(0)
        frac = F.one_hot(topi[:, 0], self.n_experts).float().mean(0)
        aux = self.n_experts * (frac * probs.mean(0)).sum()
        return out, aux


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(cfg.vocab, cfg.d)
        self.pos = nn.Parameter(torch.randn(cfg.seq_len, cfg.d) * 0.1)
        self.ln = nn.LayerNorm(cfg.d)
        self.moe = MoELayer(cfg.d, cfg.n_experts, cfg.top_k)
        self.mask_emb = nn.Parameter(torch.zeros(cfg.d))
        self.head = nn.Linear(cfg.d, cfg.n_classes)
        self._eval_cache = None

    def forward(self, tokens, pad_mask, drop_mask=None):
        h = self.emb(tokens) + self.pos
        if drop_mask is not None:
            h[drop_mask] = self.mask_emb            # token dropout with a learned mask vector
        z = self.ln(h)
        B, T, d = z.shape
        moe_out, aux = self.moe(z.reshape(-1, d), pad_mask.reshape(-1))
        h = h + moe_out.view(B, T, d)
        feats = h.mean(1)
        return self.head(feats), feats, aux

    @torch.no_grad()
    def prototypes(self):
        # cached only for evaluation, built under no_grad
        if self._eval_cache is None:
            w = self.head.weight.detach().clone()
            w /= w.norm(dim=-1, keepdim=True)
            self._eval_cache = w
        return self._eval_cache


def remap_labels(target, ignore_index=-100):
    target = target.clone()
    target[target == ignore_index] = 0
    return target


def make_data(cfg, g):
    tokens = torch.randint(1, cfg.vocab, (cfg.n_train, cfg.seq_len), generator=g)
    lengths = torch.randint(5, cfg.seq_len + 1, (cfg.n_train,), generator=g)
    pad = torch.arange(cfg.seq_len)[None] >= lengths[:, None]
    tokens[pad] = 0
    labels = (tokens.sum(1) + tokens[:, 0]) % cfg.n_classes
    labels[:4] = -100                               # a few unlabeled rows
    return tokens, pad, labels


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    tokens, pad, labels = make_data(cfg, g)
    model = Model(cfg)
    ema = Model(cfg)
    ema.load_state_dict(model.state_dict())
    for p in ema.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    hist = []
    for epoch in range(cfg.epochs):
        perm = torch.randperm(cfg.n_train, generator=g)
        for i in range(0, cfg.n_train, cfg.batch):
            idx = perm[i:i + cfg.batch]
            drop = torch.rand(len(idx), cfg.seq_len, generator=g) < 0.1
            logits, feats, aux = model(tokens[idx], pad[idx], drop)
            y = labels[idx]
            loss = F.cross_entropy(logits, y, ignore_index=-100) + cfg.aux_weight * aux
            acc_y = remap_labels(y)                    # metric works on a copy
            acc = (logits.argmax(-1) == acc_y).float().mean()
            # gradient-norm statistic with autograd.grad, graph kept for the real backward
            g_aux = torch.autograd.grad(aux, model.moe.router.weight, retain_graph=True)[0]
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.clamp_(-1.0, 1.0)
            opt.step()
            with torch.no_grad():
                for p in model.parameters():
                    p.mul_(1.0 - cfg.lr * cfg.wd)      # decoupled weight decay
                for pe, pm in zip(ema.parameters(), model.parameters()):
                    pe.mul_(cfg.ema).add_(pm, alpha=1 - cfg.ema)
            model._eval_cache = None
            hist.append((loss.item(), acc.item(), g_aux.norm().item()))
        print(f"epoch {epoch} loss {sum(h[0] for h in hist[-6:]) / 6:.6f} "
              f"acc {sum(h[1] for h in hist[-6:]) / 6:.6f} aux-grad {hist[-1][2]:.6f}")
    with torch.no_grad():
        logits, feats, _ = ema(tokens, pad)
        proto = model.prototypes()
        sim = F.normalize(feats, dim=-1) @ proto.t()
    print(f"ema acc {(logits.argmax(-1) == labels).float().mean().item():.6f} "
          f"proto-sim {sim.mean().item():.6f} load {model.moe.load.tolist()}")
    print(f"param checksum: {sum(p.detach().double().pow(2).sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
