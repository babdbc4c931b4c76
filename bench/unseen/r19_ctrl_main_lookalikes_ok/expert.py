"""Two-view prototype classifier on a 2-D toy problem (a control: every in-place / autograd-adjacent
idiom below is legal).

- a spectral-normed projection (power iteration writes its buffer, sigma uses a fresh tensor) called
  on two augmented views before one backward;
- class prototypes kept as an EMA under no_grad;
- Euclidean distances with the sqrt guarded by a clamp, a GeM-style pooling clamped before the power;
- a safe log for a masked term (double where), anomaly detection on;
- gradient-clipping hooks registered only on trainable parameters (first layer frozen);
- two losses backpropagated in one call with 0-dim weights;
- logging with NumPy on detached tensors, a preallocated buffer filled with out= under no_grad;
- per-sample gradient norms with torch.func (no BatchNorm in the model).
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class SNLinear(nn.Linear):
    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        self.register_buffer("u", F.normalize(torch.randn(out_features), dim=0))

    def forward(self, x):
        w = self.weight
        with torch.no_grad():
            v = F.normalize(torch.mv(w.t(), self.u), dim=0)
            u = F.normalize(torch.mv(w, v), dim=0)
            self.u.copy_(u)                      # buffer updated in place, not saved by autograd
        sigma = torch.dot(u, torch.mv(w, v))
        return F.linear(x, w / sigma, self.bias)


class Encoder(nn.Module):
    def __init__(self, hidden, dim):
        super().__init__()
        self.random_features = nn.Linear(2, hidden)          # frozen random features
        self.random_features.requires_grad_(False)
        self.mix = nn.Linear(hidden, hidden)
        self.norm = nn.GroupNorm(4, hidden)
        self.proj = SNLinear(hidden, dim)

    def forward(self, x):
        h = torch.cos(self.random_features(x))
        h = self.mix(h)
        h.relu_()                                             # Linear output is not saved: fine
        h = self.norm(h)
        g = h.view(h.size(0), 4, -1)                          # 4 "channels" for GeM pooling
        gem = g.clamp(min=1e-6).pow(3).mean(-1).pow(1.0 / 3)  # [B, 4]
        return self.proj(h), gem


def pairwise_dist(a, b):
    return (a.unsqueeze(1) - b.unsqueeze(0)).pow(2).sum(-1).clamp(min=1e-12).sqrt()


def make_data(n, gen):
    y = torch.randint(0, 3, (n,), generator=gen)
    angle = y.float() * 2.094 + 0.3 * torch.randn(n, generator=gen)
    x = torch.stack([angle.cos(), angle.sin()], 1) * (1 + 0.2 * torch.randn(n, 1, generator=gen))
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--aux-weight", type=float, default=0.5)
    ap.add_argument("--clip", type=float, default=1.0)
    args = ap.parse_args()

    torch.autograd.set_detect_anomaly(True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    x_tr, y_tr = make_data(768, gen)
    x_va, y_va = make_data(256, gen)

    enc = Encoder(hidden=32, dim=8)
    gem_head = nn.Linear(4, 1)
    params = [p for p in list(enc.parameters()) + list(gem_head.parameters()) if p.requires_grad]
    for p in params:
        p.register_hook(lambda g: g.clamp(-args.clip, args.clip))
    opt = torch.optim.Adam(params, lr=5e-3)

    prototypes = torch.zeros(3, 8)
    counts = torch.zeros(3)
    log_buffer = torch.empty(len(range(0, 768, args.batch_size)), 3)

    for epoch in range(1, args.epochs + 1):
        perm = torch.randperm(768, generator=gen)
        for b, i in enumerate(range(0, 768, args.batch_size)):
            idx = perm[i:i + args.batch_size]
            x, y = x_tr[idx].clone(), y_tr[idx]
            x += 0.05 * torch.randn(x.shape, generator=gen)          # in-place jitter on data
            x2 = x + 0.05 * torch.randn(x.shape, generator=gen)

            z1, gem1 = enc(x)
            z2, _ = enc(x2)                                          # second SN call before backward
            protos = prototypes / counts.clamp(min=1).unsqueeze(1)
            d = pairwise_dist(z1, protos)
            logits = -d
            logits -= logits.max(1, keepdim=True).values.detach()     # in-place on a Neg output: fine
            loss_main = F.cross_entropy(logits, y) + (z1 - z2).pow(2).sum(1).mean()

            # masked log term: log of a positive "strength" only where the class is 0 (double where)
            strength = gem_head(gem1).squeeze(1)
            pos = y == 0
            safe = torch.where(pos, F.softplus(strength), torch.ones_like(strength))
            loss_aux = -torch.where(pos, torch.log(safe), torch.zeros_like(safe)).mean()

            opt.zero_grad()
            torch.autograd.backward([loss_main, loss_aux], [torch.tensor(1.0), torch.tensor(args.aux_weight)])
            opt.step()

            with torch.no_grad():
                onehot = F.one_hot(y, 3).float()
                z_now, _ = enc(x)
                counts.mul_(0.9).add_(onehot.sum(0))
                prototypes.mul_(0.9).add_(onehot.t() @ z_now)
                torch.stack([loss_main, loss_aux, d.min(1).values.mean()], out=log_buffer[b])

        with torch.no_grad():
            zv, _ = enc(x_va)
            pred = pairwise_dist(zv, prototypes / counts.unsqueeze(1)).argmin(1)
            acc = (pred == y_va).float().mean().item()
            r = np.corrcoef(zv[:, 0].detach().numpy(), x_va[:, 0].numpy())[0, 1]

        # per-sample gradient norms of a surrogate activation penalty w.r.t. the "mix" layer (torch.func)
        mix_params = {k: v.detach() for k, v in enc.mix.named_parameters()}

        def sample_loss(p, xi):
            h = torch.cos(enc.random_features(xi.unsqueeze(0)))
            return functional_call(enc.mix, p, (h,)).relu().pow(2).mean()

        per_sample = vmap(grad(sample_loss), in_dims=(None, 0))(mix_params, x_va[:32])
        gnorm = torch.sqrt(sum(g.pow(2).flatten(1).sum(1) for g in per_sample.values())).mean().item()

        means = log_buffer.mean(0)
        print(f"epoch {epoch}  loss_main {means[0].item():.5f}  loss_aux {means[1].item():.5f}  "
              f"val_acc {acc:.5f}  corr {float(r):.5f}  ps_grad_norm {gnorm:.5f}")

    print(f"final  proto_norm {(prototypes / counts.unsqueeze(1)).norm().item():.5f}  "
          f"frozen_norm {enc.random_features.weight.norm().item():.5f}  u_norm {enc.proj.u.norm().item():.5f}")


if __name__ == "__main__":
    main()
