"""Categorical VAE with a straight-through Gumbel-softmax bottleneck.

Synthetic binary "glyphs": every sample is one of a few prototype bit patterns
with random bit flips.  The encoder maps a 32-bit vector to N categorical
latents with K classes each; the decoder reconstructs the bits.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n, n_bits=32, n_proto=6, flip=0.05, seed=0):
    g = torch.Generator().manual_seed(seed)
    protos = (torch.rand(n_proto, n_bits, generator=g) > 0.5).float()
    idx = torch.randint(0, n_proto, (n,), generator=g)
    x = protos[idx]
    noise = (torch.rand(n, n_bits, generator=g) < flip).float()
    return (x + noise) % 2


def sample_gumbel(shape, eps=1e-20):
    u = torch.rand(shape)
    return -torch.log(-torch.log(u + eps) + eps)


def gumbel_softmax(logits, tau, hard=True):
    y = F.softmax((logits + sample_gumbel(logits.shape)) / tau, dim=-1)
    if not hard:
        return y
    idx = y.argmax(dim=-1, keepdim=True)
    y_hard = torch.zeros_like(y).scatter_(-1, idx, 1.0)
    return (y_hard - y).detach() + y


class GumbelVAE(nn.Module):
    def __init__(self, n_bits=32, n_latent=4, n_cat=8, hidden=64,
                 tau0=1.0, tau_min=0.5, anneal_rate=0.9, anneal_every=40):
        super().__init__()
        self.n_latent, self.n_cat = n_latent, n_cat
        self.enc = nn.Sequential(nn.Linear(n_bits, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_latent * n_cat))
        self.dec = nn.Sequential(nn.Linear(n_latent * n_cat, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_bits))
        self.register_buffer("tau", torch.tensor(float(tau0)))
        self.tau_min = tau_min
        self.anneal_rate = anneal_rate
        self.anneal_every = anneal_every
        self.num_updates = 0

    def anneal(self):
        self.num_updates += 1
        if self.num_updates % self.anneal_every == 0:
            self.tau = (self.tau * self.anneal_rate).clamp(min=self.tau_min)

    def forward(self, x, hard=True):
        logits = self.enc(x).view(-1, self.n_latent, self.n_cat)
        z = gumbel_softmax(logits, self.tau, hard=hard)
        recon = self.dec(z.view(x.shape[0], -1))
        if self.training:
            self.anneal()
        return recon, logits


def elbo_terms(recon, x, logits):
    rec = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") / x.shape[0]
    q = F.softmax(logits, dim=-1)
    log_q = F.log_softmax(logits, dim=-1)
    kl = (q * (log_q + math.log(logits.shape[-1]))).sum((-1, -2)).mean()
    return rec, kl


def main():
    p = argparse.ArgumentParser(description="Gumbel-softmax categorical VAE")
    p.add_argument("--steps", type=int, default=160)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--tau0", type=float, default=1.0)
    p.add_argument("--anneal-every", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    data = make_data(1024, seed=args.seed)
    model = GumbelVAE(tau0=args.tau0, anneal_every=args.anneal_every)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    for step in range(1, args.steps + 1):
        idx = torch.randint(0, data.shape[0], (args.batch_size,))
        x = data[idx]
        recon, logits = model(x)
        rec, kl = elbo_terms(recon, x, logits)
        loss = rec + kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 40 == 0:
            print(f"step {step:4d}  rec {rec.item():.4f}  kl {kl.item():.4f}  tau {model.tau.item():.4f}")

    model.eval()
    with torch.no_grad():
        recon, logits = model(data[:256])
        err = ((recon > 0).float() != data[:256]).float().mean().item()
        usage = F.one_hot(logits.argmax(-1), model.n_cat).float().mean((0, 1))
    print(f"bit error {err:.4f}  code perplexity {torch.exp(-(usage * (usage + 1e-9).log()).sum()).item():.4f}")
    print(f"param checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
