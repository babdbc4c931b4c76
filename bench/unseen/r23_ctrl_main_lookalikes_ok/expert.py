"""Sequence tagger with a linear-chain CRF: many in-place ops that look like this round's bugs but are legal."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer


class BatchRenorm1d(nn.Module):
    def __init__(self, n, momentum=0.1, eps=1e-5, r_max=3.0, d_max=5.0):
        super().__init__()
        self.momentum, self.eps, self.r_max, self.d_max = momentum, eps, r_max, d_max
        self.weight = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n))
        self.register_buffer("running_mean", torch.zeros(n))
        self.register_buffer("running_std", torch.ones(n))

    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            std = (x.var(0, unbiased=False) + self.eps).sqrt()
            r = (std.detach() / self.running_std).clamp(1 / self.r_max, self.r_max)
            d = ((mean.detach() - self.running_mean) / self.running_std).clamp(-self.d_max, self.d_max)
            x_hat = (x - mean) / std * r + d
            with torch.no_grad():  # legal: the buffers were never saved for backward
                self.running_mean.mul_(1 - self.momentum).add_(mean, alpha=self.momentum)
                self.running_std.mul_(1 - self.momentum).add_(std, alpha=self.momentum)
        else:
            x_hat = (x - self.running_mean) / self.running_std
        return self.weight * x_hat + self.bias


class CRF(nn.Module):
    def __init__(self, n_tags):
        super().__init__()
        self.trans = nn.Parameter(torch.randn(n_tags, n_tags) * 0.1)

    def log_partition(self, emis):
        B, T, K = emis.shape
        alphas = emis.new_zeros(B, T, K)
        alphas[:, 0] = emis[:, 0]
        for t in range(1, T):
            # legal: logsumexp saves its (fresh) input and result, not `alphas`
            alphas[:, t] = torch.logsumexp(alphas[:, t - 1].unsqueeze(2) + self.trans, dim=1) + emis[:, t]
        return torch.logsumexp(alphas[:, -1], dim=1)

    def score(self, emis, tags):
        s = emis.gather(2, tags.unsqueeze(2)).squeeze(2).sum(1)
        s = s + self.trans[tags[:, :-1], tags[:, 1:]].sum(1)
        return s

    def nll(self, emis, tags):
        return (self.log_partition(emis) - self.score(emis, tags)).mean()


class Tagger(nn.Module):
    def __init__(self, vocab, dim, n_tags, keep=0.8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mask_emb = nn.Parameter(torch.zeros(dim))
        self.fc = nn.Linear(dim, dim)
        self.brn = BatchRenorm1d(dim)
        self.out = nn.Linear(dim, n_tags)
        self.aux = nn.Linear(dim, 2)
        self.crf = CRF(n_tags)
        self.keep = keep

    def forward(self, ids, mask_pos):
        e = self.emb(ids)
        e[mask_pos] = self.mask_emb          # legal: embedding does not save its output
        h = self.fc(e)
        if self.training:                    # legal: addmm does not save its output
            m = torch.bernoulli(torch.full(h.shape[:2] + (1,), self.keep))
            h.mul_(m).div_(self.keep)
        h = F.relu(h)
        B, T, D = h.shape
        h = self.brn(h.reshape(B * T, D)).reshape(B, T, D)
        return self.out(h), self.aux(h.mean(1))


class NoisySGD(Optimizer):
    def __init__(self, params, lr=0.05, noise=1e-3):
        super().__init__(params, dict(lr=lr, noise=noise))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.add_(torch.randn_like(p.grad) * group["noise"])   # legal: grads are not leaves of a graph
                p.add_(p.grad, alpha=-group["lr"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--seq", type=int, default=7)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()

    torch.manual_seed(0)
    vocab, n_tags = 15, 4
    model = Tagger(vocab, 16, n_tags)
    opt = NoisySGD(model.parameters(), lr=args.lr)
    for step in range(args.steps):
        ids = torch.randint(0, vocab, (24, args.seq))
        tags = ids % n_tags
        aux_y = (ids[:, 0] > vocab // 2).long()
        mask_pos = torch.rand(ids.shape) < 0.15
        emis, aux_logits = model(ids, mask_pos)
        aux_loss = F.cross_entropy(aux_logits, aux_y)
        aux_logits.div_(2.0)                 # legal: log_softmax saved its result, not aux_logits
        loss = model.crf.nll(emis, tags) + 0.5 * aux_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            print(f"step {step} loss {loss.item():.6f} aux_conf {aux_logits.softmax(1).max(1)[0].mean().item():.6f}")
    print(f"running_std sum {model.brn.running_std.sum().item():.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
