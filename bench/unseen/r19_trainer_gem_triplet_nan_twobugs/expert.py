"""Metric learning for instance retrieval: small CNN + GeM pooling + batch-hard triplet loss.

Config: config.yaml next to this file.
"""
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml


class GeM(nn.Module):
    """Generalized-mean pooling (Radenovic et al.)."""

    def __init__(self, p=3.0):
        super().__init__()
        self.p = p

    def forward(self, x):
        return (x.clamp(min=1e-6).pow(self.p).mean(dim=[-1, -2])).clamp(min=0.0) ** (1.0 / self.p)


class EmbeddingNet(nn.Module):
    def __init__(self, embed_dim, p):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
        )
        self.pool = GeM(p)
        self.fc = nn.Linear(32, embed_dim)

    def forward(self, x):
        return F.normalize(self.fc(self.pool(self.backbone(x))), dim=1)


def pairwise_euclidean(emb):
    diff = emb.unsqueeze(1) - emb.unsqueeze(0)
    return diff.pow(2).sum(-1).clamp(min=1e-12).sqrt()


def batch_hard_triplet(emb, labels, margin):
    dist = pairwise_euclidean(emb)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    dist_ap = (dist * same.float()).max(dim=1).values                 # hardest positive
    dist_an = (dist + 1e4 * same.float()).min(dim=1).values            # hardest negative
    loss = F.relu(dist_ap - dist_an + margin).mean()
    return loss, dist_ap.mean(), dist_an.mean()


class RetrievalData:
    def __init__(self, cfg, gen):
        n, k, s = cfg["num_identities"], cfg["images_per_identity"], cfg["image_size"]
        protos = torch.randn(n, 3, s, s, generator=gen)
        self.images = protos.repeat_interleave(k, 0) + 0.7 * torch.randn(n * k, 3, s, s, generator=gen)
        self.labels = torch.arange(n).repeat_interleave(k)
        self.n, self.k = n, k
        self.gen = gen

    def pk_batch(self, p, k):
        ids = torch.randperm(self.n, generator=self.gen)[:p]
        idx = torch.cat([i * self.k + torch.randperm(self.k, generator=self.gen)[:k] for i in ids.tolist()])
        return self.images[idx], self.labels[idx]


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        self.gen = torch.Generator().manual_seed(cfg["seed"])
        self.data = RetrievalData(cfg, self.gen)
        self.model = EmbeddingNet(cfg["embed_dim"], cfg["gem_p"])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["lr"],
                                           weight_decay=cfg["weight_decay"])
        self.global_step = 0

    def train_step(self, images, labels):
        self.model.train()
        emb = self.model(images)
        loss, d_ap, d_an = batch_hard_triplet(emb, labels, self.cfg["margin"])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.global_step += 1
        return loss.item(), d_ap.item(), d_an.item()

    @torch.no_grad()
    def recall_at_1(self):
        self.model.eval()
        emb = self.model(self.data.images)
        dist = torch.cdist(emb, emb)
        dist.fill_diagonal_(float("inf"))
        nn_idx = dist.argmin(dim=1)
        return (self.data.labels[nn_idx] == self.data.labels).float().mean().item()

    def fit(self):
        for epoch in range(1, self.cfg["epochs"] + 1):
            stats = []
            for _ in range(self.cfg["iters_per_epoch"]):
                images, labels = self.data.pk_batch(self.cfg["p_identities"], self.cfg["k_images"])
                stats.append(self.train_step(images, labels))
            loss, d_ap, d_an = (sum(s[i] for s in stats) / len(stats) for i in range(3))
            print(f"epoch {epoch}  loss {loss:.5f}  d_ap {d_ap:.5f}  d_an {d_an:.5f}  "
                  f"recall@1 {self.recall_at_1():.5f}")
        print(f"final  steps {self.global_step}  fc_norm {self.model.fc.weight.norm().item():.5f}")


def main():
    cfg = yaml.safe_load(Path(__file__).with_name("config.yaml").read_text())
    torch.autograd.set_detect_anomaly(cfg["detect_anomaly"])
    Trainer(cfg).fit()


if __name__ == "__main__":
    main()
