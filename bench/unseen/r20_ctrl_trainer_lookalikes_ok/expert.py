"""Control: a Trainer for a tiny soft-capped transformer classifier plus a
contrastive auxiliary loss, full of in-place operations that *look* like the
classic autograd bugs but are all legal (nothing that autograd saved is
modified, no leaf is written with grad enabled, no graph is reused).
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P
from torch.nn.utils.parametrizations import orthogonal


@dataclass
class Config:
    vocab: int = 30
    dim: int = 32
    heads: int = 4
    seq_len: int = 12
    n_classes: int = 3
    batch: int = 32
    epochs: int = 4
    lr: float = 3e-3
    softcap: float = 5.0
    tau: float = 0.2
    ema_decay: float = 0.9
    adv_eps: float = 0.01
    seed: int = 0


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        scale = self.weight.float() + 1.0            # out of place: .float() may alias the Parameter
        return out * scale


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm = RMSNorm(cfg.dim)
        self.attn = nn.MultiheadAttention(cfg.dim, cfg.heads, batch_first=True)
        self.mix = orthogonal(nn.Linear(cfg.dim, cfg.dim, bias=False))
        self.ff = nn.Sequential(nn.Linear(cfg.dim, 2 * cfg.dim), nn.ReLU(inplace=True),
                                nn.Linear(2 * cfg.dim, cfg.dim))

    def forward(self, x, pad):
        h = self.norm(x)
        out, attn = self.attn(h, h, h, key_padding_mask=pad, need_weights=True, average_attn_weights=False)
        x = x + out
        y = self.ff(x)
        y += self.mix(x)                             # y is a Linear output: nothing saved it
        x = x + y
        return x, attn


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.dim, padding_idx=0)
        self.block = Block(cfg)
        self.head = nn.Linear(cfg.dim, cfg.n_classes)
        self.proj = nn.Linear(cfg.dim, 16)
        self.softcap = cfg.softcap

    def forward(self, ids):
        pad = ids.eq(0)
        x = self.embed(ids)
        x *= 2.0                                     # embedding output is not saved by its backward
        x, attn = self.block(x, pad)
        keep = (~pad).unsqueeze(-1).float()
        pooled = (x * keep).sum(1) / keep.sum(1)
        logits = torch.tanh(self.head(pooled) / self.softcap) * self.softcap
        logits[:, 0] -= 0.1                          # edits the `mul` output, not tanh's saved result
        return logits, self.proj(pooled), attn


class Callback:
    def on_epoch_end(self, trainer, epoch):
        pass


class EMACallback(Callback):
    def __init__(self, model, decay):
        self.decay = decay
        self.shadow = [p.detach().clone() for p in model.parameters()]

    def on_step_end(self, trainer):
        with torch.no_grad():
            for s, p in zip(self.shadow, trainer.model.parameters()):
                s.mul_(self.decay).add_(p, alpha=1 - self.decay)

    def on_epoch_end(self, trainer, epoch):
        trainer.history["ema_norm"].append(sum(s.norm().item() for s in self.shadow))


class ProbeCallback(Callback):
    def __init__(self, ids, labels, n_classes):
        self.ids, self.labels = ids, labels
        self.probe = nn.Linear(16, n_classes)
        self.opt = torch.optim.SGD(self.probe.parameters(), lr=0.5)

    def on_epoch_end(self, trainer, epoch):
        with P.cached(), torch.no_grad():
            _, feats, _ = trainer.model(self.ids)
        for _ in range(10):
            self.opt.zero_grad()
            loss = F.cross_entropy(self.probe(feats), self.labels)
            loss.backward()
            self.opt.step()
        trainer.history["probe_loss"].append(loss.item())


class Trainer:
    def __init__(self, model, cfg, callbacks=()):
        self.model, self.cfg = model, cfg
        self.callbacks = list(callbacks)
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.gen = torch.Generator().manual_seed(cfg.seed + 3)
        self.history = {"loss": [], "ema_norm": [], "probe_loss": []}
        with torch.no_grad():                        # zero the padding row of the embedding
            self.model.embed.weight[0].zero_()

    def contrastive(self, z1, z2):
        z = F.normalize(torch.cat([z1, z2]), dim=1)
        logits = z @ z.t() / self.cfg.tau
        logits.fill_diagonal_(-1e9)                  # `div` by a scalar saves nothing
        n = z1.shape[0]
        targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
        return F.cross_entropy(logits, targets)

    def attn_entropy(self, attn):
        attn = attn.clamp(min=1e-8)
        return (-(attn * attn.log()).sum(-1)).mean()

    def train_step(self, ids, labels):
        self.opt.zero_grad()
        with P.cached():
            logits, z1, attn = self.model(ids)
            drop = ids.masked_fill(torch.rand(ids.shape, generator=self.gen) < 0.15, 0)
            _, z2, _ = self.model(drop)
        per_ex = F.cross_entropy(logits, labels, reduction="none")
        per_ex[per_ex > per_ex.median()] *= 1.5      # up-weight hard examples (nll output not saved)
        loss = per_ex.mean() + 0.1 * self.contrastive(z1, z2) + 0.01 * self.attn_entropy(attn)
        loss.backward()

        # adversarial weight perturbation: perturb -> forward -> backward -> restore
        head = self.model.head.weight
        backup = head.detach().clone()
        with torch.no_grad():
            head.add_(self.cfg.adv_eps * head.grad.sign())
        with P.cached():
            adv_logits, _, _ = self.model(ids)
        F.cross_entropy(adv_logits, labels).mul(0.5).backward()
        with torch.no_grad():
            head.copy_(backup)

        for p in self.model.parameters():
            if p.grad is not None:
                p.grad.clamp_(-1.0, 1.0)
        self.opt.step()
        for cb in self.callbacks:
            if hasattr(cb, "on_step_end"):
                cb.on_step_end(self)
        return loss.item()

    def fit(self, ids, labels):
        n = ids.shape[0]
        for epoch in range(self.cfg.epochs):
            perm = torch.randperm(n, generator=self.gen)
            tot = []
            for i in range(0, n, self.cfg.batch):
                b = perm[i:i + self.cfg.batch]
                tot.append(self.train_step(ids[b], labels[b]))
            self.history["loss"].append(sum(tot) / len(tot))
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
        return self.history


def make_data(cfg, n, gen):
    ids = torch.randint(1, cfg.vocab, (n, cfg.seq_len), generator=gen)
    lengths = torch.randint(cfg.seq_len // 2, cfg.seq_len + 1, (n,), generator=gen)
    ids[torch.arange(cfg.seq_len)[None] >= lengths[:, None]] = 0
    labels = ((ids % 3 == 0).sum(1) + (ids % 5 == 0).sum(1)) % cfg.n_classes
    return ids, labels


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    ids, labels = make_data(cfg, 256, gen)
    model = Model(cfg)
    trainer = Trainer(model, cfg, callbacks=[EMACallback(model, cfg.ema_decay),
                                             ProbeCallback(ids[:64], labels[:64], cfg.n_classes)])
    hist = trainer.fit(ids, labels)
    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print("epoch_loss", " ".join(f"{v:.6f}" for v in hist["loss"]))
    print("probe_loss", " ".join(f"{v:.6f}" for v in hist["probe_loss"]))
    print(f"ema_norm {hist['ema_norm'][-1]:.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
