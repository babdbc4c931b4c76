"""Slot-attention set encoder whose in-place lines only touch tensors nobody saved."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class SlotPool(nn.Module):
    def __init__(self, dim=16, k=3, iters=2):
        super().__init__()
        self.k, self.iters, self.dim = k, iters, dim
        self.embed = nn.Linear(2, dim)
        self.mask_token = nn.Parameter(torch.zeros(dim))
        self.norm_in, self.norm_slots = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.kv = nn.Linear(dim, dim, bias=False), nn.Linear(dim, 2 * dim, bias=False)
        self.gru = nn.GRUCell(dim, dim)
        self.slots_init = nn.Parameter(torch.randn(1, k, dim) * 0.3)
        self.head = nn.Linear(dim, 3)

    def forward(self, pts, drop):
        x = self.embed(pts)
        x[drop] = self.mask_token               # index_put on a Linear output (not saved)
        k, v = self.kv(self.norm_in(x)).chunk(2, -1)
        slots = self.slots_init.expand(pts.size(0), -1, -1)
        for _ in range(self.iters):
            q = self.q(self.norm_slots(slots))
            q *= self.dim ** -0.5                # Linear output, scaled before use
            attn = torch.einsum("bnd,bkd->bnk", k, q).softmax(-1) + 1e-8
            attn /= attn.sum(1, keepdim=True)     # the add's output, not softmax's
            upd = torch.einsum("bnk,bnd->bkd", attn, v)
            slots = self.gru(upd.reshape(-1, self.dim), slots.reshape(-1, self.dim)).view_as(upd)
        return self.head(slots.mean(1))


def run(cfg, gen):
    n, m = cfg["n_sets"], cfg["n_points"]
    y = torch.randint(0, 3, (n,), generator=gen)
    ang = torch.rand(n, m, generator=gen) * 2 * math.pi
    ring = torch.stack([ang.cos(), ang.sin()], -1)
    line = torch.stack([ang / math.pi - 1, torch.zeros_like(ang)], -1)
    blob = torch.randn(n, m, 2, generator=gen) * 0.3
    pts = torch.where((y == 0)[:, None, None], ring, torch.where((y == 1)[:, None, None], line, blob))
    model = SlotPool()
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        tot = correct = 0.0
        for i in range(0, n, 16):
            drop = torch.rand(pts[i:i + 16].shape[:2], generator=gen) < 0.1
            logits = model(pts[i:i + 16], drop)
            loss = F.cross_entropy(logits, y[i:i + 16])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item()
            correct += (logits.argmax(1) == y[i:i + 16]).sum().item()
        print(f"slots epoch {epoch} loss {tot / (n // 16):.6f} acc {correct / n:.6f}")
    return model
