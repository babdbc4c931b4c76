"""VQ autoencoder with an EMA codebook and a codebook-usage entropy bonus."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    dim: int = 8
    codebook_size: int = 16
    decay: float = 0.9
    eps: float = 1e-5
    entropy_weight: float = 0.1
    commit_weight: float = 0.25
    steps: int = 30
    batch: int = 64
    lr: float = 1e-2


class EMAQuantizer(nn.Module):
    def __init__(self, num_codes, dim, decay, eps):
        super().__init__()
        self.num_codes, self.decay, self.eps = num_codes, decay, eps
        embed = torch.randn(num_codes, dim)
        self.register_buffer("embed", embed)
        self.register_buffer("embed_avg", embed.clone())
        self.register_buffer("cluster_size", torch.ones(num_codes))
        self.register_buffer("avg_probs", torch.full((num_codes,), 1.0 / num_codes))

    def forward(self, z):
        dist = (z.pow(2).sum(1, keepdim=True)
                - 2 * z @ self.embed.t()
                + self.embed.pow(2).sum(1))
        idx = dist.argmin(1)
        # soft assignment for the usage (perplexity) bonus
        probs = F.softmax(-dist, dim=1)
        self.avg_probs = self.decay * self.avg_probs + (1 - self.decay) * probs.mean(0)
        entropy = -(self.avg_probs * torch.log(self.avg_probs + 1e-10)).sum()

        quant = F.embedding(idx, self.embed)
        if self.training:
            with torch.no_grad():
                onehot = F.one_hot(idx, self.num_codes).type_as(z)
                self.cluster_size.mul_(self.decay).add_(onehot.sum(0), alpha=1 - self.decay)
                self.embed_avg.mul_(self.decay).add_(onehot.t() @ z, alpha=1 - self.decay)
                n = self.cluster_size.sum()
                size = (self.cluster_size + self.eps) / (n + self.num_codes * self.eps) * n
                self.embed.copy_(self.embed_avg / size.unsqueeze(1))
        commit = F.mse_loss(z, quant.detach())
        quant_st = z + (quant - z).detach()
        return quant_st, commit, entropy


class VQAE(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, cfg.dim))
        self.vq = EMAQuantizer(cfg.codebook_size, cfg.dim, cfg.decay, cfg.eps)
        self.dec = nn.Sequential(nn.Linear(cfg.dim, 32), nn.ReLU(), nn.Linear(32, 20))

    def forward(self, x):
        z = self.enc(x)
        q, commit, entropy = self.vq(z)
        return self.dec(q), commit, entropy


def main(cfg: Config = Config()):
    torch.manual_seed(0)
    centers = torch.randn(6, 20) * 2
    data = centers[torch.randint(0, 6, (1024,))] + 0.3 * torch.randn(1024, 20)
    model = VQAE(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for step in range(cfg.steps):
        x = data[torch.randint(0, data.size(0), (cfg.batch,))]
        recon, commit, entropy = model(x)
        loss = F.mse_loss(recon, x) + cfg.commit_weight * commit - cfg.entropy_weight * entropy
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == cfg.steps - 1:
            print(f"step {step} loss {loss.item():.6f} entropy {entropy.item():.6f}")
    print(f"codebook sum {model.vq.embed.sum().item():.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
