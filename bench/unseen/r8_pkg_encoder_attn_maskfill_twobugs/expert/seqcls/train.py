import torch

from .data import iterate, make_dataset
from .losses import smoothed_ce
from .model import OrderClassifier


@torch.no_grad()
def accuracy(model, ids, labels):
    model.eval()
    return (model(ids).argmax(1) == labels).float().mean().item()


def fit(cfg):
    torch.manual_seed(cfg.seed)
    train = make_dataset(1024, cfg.max_len, cfg.vocab, seed=1)
    val = make_dataset(512, cfg.max_len, cfg.vocab, seed=2)
    model = OrderClassifier(cfg.vocab, cfg.dim, cfg.heads, cfg.depth, cfg.max_len)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    gen = torch.Generator().manual_seed(cfg.seed)
    for epoch in range(cfg.epochs):
        model.train()
        total, n = 0.0, 0
        for ids, labels in iterate(*train, cfg.batch_size, gen):
            loss = smoothed_ce(model(ids), labels, cfg.smoothing)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, n = total + loss.item() * len(ids), n + len(ids)
        print(f"epoch {epoch} loss {total / n:.5f} val_acc {accuracy(model, *val):.4f}")
    return model
