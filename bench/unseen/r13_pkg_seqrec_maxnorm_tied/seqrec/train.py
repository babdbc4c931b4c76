import argparse
import json
from pathlib import Path

import torch
import torch.nn.functional as F

from .data import batches, make_sessions
from .losses import bpr_loss, recall_at_k, sample_negatives
from .model import GRU4Rec


def load_config(path=None):
    path = Path(path) if path else Path(__file__).with_name("config.json")
    with open(path) as f:
        return json.load(f)


def train_epoch(model, opt, seqs, targets, cfg, gen):
    total, n = 0.0, 0
    model.train()
    for seq, tgt in batches(seqs, targets, cfg["batch_size"], gen):
        h = model(seq)
        ce = F.cross_entropy(model.score_all(h), tgt)
        neg = sample_negatives(tgt, cfg["n_items"], cfg["n_neg"], gen)
        bpr = bpr_loss(model.score_items(h, tgt[:, None]), model.score_items(h, neg))
        loss = ce + cfg["bpr_weight"] * bpr
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * seq.shape[0]
        n += seq.shape[0]
    return total / n


@torch.no_grad()
def evaluate(model, seqs, targets):
    model.eval()
    return recall_at_k(model.score_all(model(seqs)), targets)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=None)
    parser.add_argument("--epochs", type=int, default=None)
    args = parser.parse_args()
    cfg = load_config(args.config)
    if args.epochs is not None:
        cfg["epochs"] = args.epochs

    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"] + 1)
    tr_x, tr_y = make_sessions(cfg["n_train"], cfg["n_items"], cfg["n_clusters"], cfg["seq_len"], cfg["seed"])
    te_x, te_y = make_sessions(cfg["n_test"], cfg["n_items"], cfg["n_clusters"], cfg["seq_len"], cfg["seed"] + 7)

    model = GRU4Rec(cfg["n_items"], cfg["emb_dim"], cfg["hidden"], cfg["max_norm"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(1, cfg["epochs"] + 1):
        loss = train_epoch(model, opt, tr_x, tr_y, cfg, gen)
        rec = evaluate(model, te_x, te_y)
        print(f"epoch {epoch}  loss {loss:.4f}  recall@10 {rec:.4f}")
    norms = model.item_emb.weight.norm(dim=1)
    print(f"max item norm {norms.max().item():.4f}  mean item norm {norms.mean().item():.4f}")
    print(f"param checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
