"""VQ-VAE on a synthetic mixture with dead-code restarts (Jukebox / SoundStream style).

Codes whose running usage falls under a threshold are re-initialised from encoder outputs
of the current batch every --restart-every steps.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizer(nn.Module):
    def __init__(self, n_codes, dim, beta=0.25, decay=0.9):
        super().__init__()
        self.codebook = nn.Embedding(n_codes, dim)
        nn.init.uniform_(self.codebook.weight, -1.0 / n_codes, 1.0 / n_codes)
        self.beta, self.decay = beta, decay
        self.register_buffer("usage", torch.full((n_codes,), 1.0 / n_codes))

    def forward(self, z_e):
        w = self.codebook.weight
        dist = z_e.pow(2).sum(1, keepdim=True) - 2 * z_e @ w.t() + w.pow(2).sum(1)
        idx = dist.argmin(1)
        z_q = self.codebook(idx)
        loss = F.mse_loss(z_q, z_e.detach()) + self.beta * F.mse_loss(z_e, z_q.detach())
        if self.training:
            with torch.no_grad():
                counts = F.one_hot(idx, w.size(0)).float().mean(0)
                self.usage.mul_(self.decay).add_(counts, alpha=1 - self.decay)
        z_st = z_e + (z_q - z_e).detach()       # straight-through estimator
        return z_st, loss, idx

    @torch.no_grad()
    def dead_code_rows(self, threshold):
        """(index, row-view) pairs of codebook entries whose usage fell below threshold."""
        dead = (self.usage < threshold).nonzero().flatten().tolist()
        return [(i, self.codebook.weight[i]) for i in dead]


class VQVAE(nn.Module):
    def __init__(self, x_dim, hidden, code_dim, n_codes):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(x_dim, hidden), nn.ReLU(), nn.Linear(hidden, code_dim))
        self.vq = VectorQuantizer(n_codes, code_dim)
        self.dec = nn.Sequential(nn.Linear(code_dim, hidden), nn.ReLU(), nn.Linear(hidden, x_dim))

    def forward(self, x):
        z_e = self.enc(x)
        z_q, vq_loss, idx = self.vq(z_e)
        return self.dec(z_q), vq_loss, idx, z_e


class VQTrainer:
    def __init__(self, model, lr, restart_every, threshold, gen):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.restart_every, self.threshold, self.gen = restart_every, threshold, gen
        self.step, self.restarted = 0, 0

    def restart_dead_codes(self, z_e):
        rows = self.model.vq.dead_code_rows(self.threshold)
        if not rows:
            return
        pick = torch.randint(0, z_e.size(0), (len(rows),), generator=self.gen)
        with torch.no_grad():
            for (i, row), j in zip(rows, pick.tolist()):
                row.copy_(z_e[j])
                self.model.vq.usage[i] = 1.0 / self.model.vq.usage.numel()
        self.restarted += len(rows)

    def train_step(self, x):
        self.model.train()
        recon, vq_loss, idx, z_e = self.model(x)
        rec = F.mse_loss(recon, x)
        loss = rec + vq_loss
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        if self.step % self.restart_every == 0:
            self.restart_dead_codes(z_e)
        return rec.item(), vq_loss.item()

    @torch.no_grad()
    def evaluate(self, x):
        self.model.eval()
        recon, _, idx, _ = self.model(x)
        probs = torch.bincount(idx, minlength=self.model.vq.usage.numel()).float() / idx.numel()
        perplexity = torch.exp(-(probs * (probs + 1e-10).log()).sum())
        return F.mse_loss(recon, x).item(), perplexity.item()

    def fit(self, train, val, epochs, batch_size):
        for epoch in range(epochs):
            perm = torch.randperm(train.size(0), generator=self.gen)
            stats = []
            for i in range(0, train.size(0), batch_size):
                stats.append(self.train_step(train[perm[i:i + batch_size]]))
            rec, vq = torch.tensor(stats).mean(0).tolist()
            v_rec, ppl = self.evaluate(val)
            print(f"epoch {epoch} rec {rec:.5f} vq {vq:.5f} | val rec {v_rec:.5f} "
                  f"perplexity {ppl:.3f} restarted {self.restarted}")


def mixture(n, x_dim, n_modes, gen):
    centers = torch.randn(n_modes, x_dim, generator=torch.Generator().manual_seed(99)) * 2
    comp = torch.randint(0, n_modes, (n,), generator=gen)
    return centers[comp] + 0.3 * torch.randn(n, x_dim, generator=gen)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--codes", type=int, default=32)
    p.add_argument("--code-dim", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--restart-every", type=int, default=5)
    p.add_argument("--threshold", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=4)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(args.seed)
    train, val = mixture(640, 16, 12, gen), mixture(256, 16, 12, gen)
    model = VQVAE(16, 64, args.code_dim, args.codes)
    trainer = VQTrainer(model, args.lr, args.restart_every, args.threshold, gen)
    trainer.fit(train, val, args.epochs, args.batch_size)
    print(f"codebook norm {model.vq.codebook.weight.norm().item():.5f} "
          f"live codes {(model.vq.usage >= args.threshold).sum().item()}")


if __name__ == "__main__":
    main()
