"""Control: a multi-objective toy trainer full of legal look-alikes of this round's bugs."""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune


def off_diagonal(x):
    n, m = x.shape
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class ActNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.logs = nn.Parameter(torch.zeros(dim))
        self.initialized = False

    def forward(self, x):
        if not self.initialized:
            with torch.no_grad():
                self.loc.copy_(-x.mean(0))
                self.logs.copy_(-torch.log(x.std(0) + 1e-6))
            self.initialized = True
        return (x + self.loc) * torch.exp(self.logs)


class Encoder(nn.Module):
    def __init__(self, n_classes, dim=16):
        super().__init__()
        self.norm = ActNorm(8)
        self.fc1 = nn.Linear(8, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.label_emb = nn.Embedding(n_classes, dim)
        self.null_emb = nn.Parameter(torch.zeros(dim))
        self.coupling = nn.Linear(dim // 2, dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x, y, drop_mask):
        h = F.relu(self.fc1(self.norm(x)))
        h = self.fc2(h)
        h.mul_(0.5)                      # output of addmm is not saved by anyone
        cond = self.label_emb(y)
        cond[drop_mask] = self.null_emb  # classifier-free-guidance style condition dropout
        h = h + cond
        ha, hb = h.chunk(2, dim=1)
        log_s, t = self.coupling(ha).chunk(2, dim=1)
        hb = hb.clone()
        hb.mul_(torch.exp(torch.tanh(log_s))).add_(t)   # in place on a private clone
        return torch.cat([ha, hb], 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.01)
    args = ap.parse_args()

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    n_classes = 3
    x_all = torch.randn(96, 8, generator=g)
    y_all = (x_all[:, :3].argmax(1))
    enc = Encoder(n_classes)
    enc_ema = copy.deepcopy(enc)
    for p in enc_ema.parameters():
        p.requires_grad_(False)
    centers = torch.zeros(n_classes, 16)
    opt = torch.optim.Adam(enc.parameters(), lr=args.lr)
    init_w = enc.fc1.weight.detach().clone()

    for step in range(args.steps):
        idx = torch.randint(0, 96, (32,), generator=g)
        x, y = x_all[idx], y_all[idx]
        drop = torch.rand(32, generator=g) < 0.2
        xa = (x + 0.1 * torch.randn(32, 8, generator=g)).requires_grad_(True)
        xb = x + 0.1 * torch.randn(32, 8, generator=g)
        za, zb = enc(xa, y, drop), enc(xb, y, drop)

        # Barlow Twins cross-correlation with the reference implementation's in-place ops
        za_n = (za - za.mean(0)) / (za.std(0) + 1e-5)
        zb_n = (zb - zb.mean(0)) / (zb.std(0) + 1e-5)
        c = za_n.T @ zb_n
        c.div_(32)
        on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
        off_diag = off_diagonal(c).pow_(2).sum()
        bt = on_diag + 0.005 * off_diag

        logits = enc.head(za)
        ce = F.cross_entropy(logits, y)
        # adaptive weight: gradients used as constants, graph kept for the real backward
        last = enc.coupling.weight
        g_ce = torch.autograd.grad(ce, last, retain_graph=True)[0]
        g_bt = torch.autograd.grad(bt, last, retain_graph=True)[0]
        w = (g_ce.norm() / (g_bt.norm() + 1e-4)).clamp(0, 10).detach()

        # input-gradient penalty meant to be trained: differentiable derivative
        gin = torch.autograd.grad(F.log_softmax(logits, 1).sum(), xa, create_graph=True)[0]
        penalty = gin.pow(2).sum(1).mean()

        # center loss with a rule-based center update on detached values
        cb = centers[y]
        closs = 0.5 * (za - cb).pow(2).sum(1).mean()
        with torch.no_grad():
            delta = torch.zeros_like(centers).index_add_(0, y, cb - za)
            centers -= 0.5 * delta / (1 + torch.bincount(y, minlength=n_classes).float().unsqueeze(1))

        loss = ce + 0.01 * w * bt + 0.01 * penalty + 0.01 * closs
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for name, pe in enc_ema.named_parameters():
                mod_name, _, attr = name.rpartition(".")
                src = getattr(enc.get_submodule(mod_name), attr)   # pruned fc1: masked weight
                pe.mul_(0.9).add_(src, alpha=0.1)
        if step % 2 == 0:
            print(f"step {step} loss {loss.item():.6f} ce {ce.item():.6f} bt {bt.item():.6f}")

        if step == args.steps // 2:
            prune.l1_unstructured(enc.fc1, name="weight", amount=0.25)
            with torch.no_grad():
                enc.fc1.weight_orig.copy_(init_w)   # rewind, lottery-ticket style
            opt = torch.optim.Adam(enc.parameters(), lr=args.lr)

    total = sum(p.sum() for p in enc.parameters()).item()
    ema = sum(p.sum() for p in enc_ema.parameters()).item()
    print(f"centers {centers.sum().item():.6f}")
    print(f"checksum {total:.6f} ema {ema:.6f}")


if __name__ == "__main__":
    main()
