import torch
import torch.nn.functional as F

from .config import Config
from .model import Encoder, MemoryBank


def make_data(cfg):
    g = torch.Generator().manual_seed(cfg.seed)
    centers = torch.randn(8, cfg.d_in, generator=g)
    labels = torch.arange(cfg.n_samples) % 8
    x = centers[labels] + 0.8 * torch.randn(cfg.n_samples, cfg.d_in, generator=g)
    return x, labels


def main(cfg=Config()):
    torch.manual_seed(cfg.seed)
    x, labels = make_data(cfg)
    enc = Encoder(cfg.d_in, cfg.dim)
    bank = MemoryBank(cfg.n_samples, cfg.dim, cfg.bank_momentum)
    opt = torch.optim.SGD(enc.parameters(), lr=cfg.lr, momentum=0.9)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    for epoch in range(cfg.epochs):
        perm = torch.randperm(cfg.n_samples, generator=gen)
        total = 0.0
        for start in range(0, cfg.n_samples, cfg.batch_size):
            idx = perm[start:start + cfg.batch_size]
            xb = x[idx] + 0.1 * torch.randn(len(idx), cfg.d_in, generator=gen)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.bf16):
                feats = enc(xb)
                logits = bank.logits(feats, cfg.temperature)
            loss = F.cross_entropy(logits.float(), idx)   # each sample is its own class
            opt.zero_grad()
            loss.backward()
            opt.step()
            bank.update(idx, feats)
            total += loss.item() * len(idx)
        with torch.no_grad():
            sim = bank.bank @ bank.bank.T
            sim.fill_diagonal_(-2)
            knn = (labels[sim.argmax(1)] == labels).float().mean().item()
        print(f"epoch {epoch} loss {total / cfg.n_samples:.5f} bank_knn {knn:.5f}")


if __name__ == "__main__":
    main()
