"""Implicit-feedback recommender: matrix factorisation trained with BPR, evaluated by HR@10.

Item ids are raw catalogue ids; they are remapped to contiguous indices from the training log,
and ids never seen in training go to an out-of-vocabulary bucket.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_log(n_users, n_catalogue, gen):
    u_f = torch.randn(n_users, 4, generator=gen)
    i_f = torch.randn(n_catalogue, 4, generator=gen)
    affinity = u_f @ i_f.t() + 0.5 * torch.randn(n_users, n_catalogue, generator=gen)
    train, valid = [], []
    for u in range(n_users):
        top = torch.topk(affinity[u], 12).indices.tolist()
        train += [(u, 1000 + i) for i in top[:10]]
        valid.append((u, 1000 + top[10]))
    # a few items were launched after the training log was cut: they only appear in validation
    for u in range(0, n_users, 16):
        valid[u] = (u, 1000 + n_catalogue + u // 16)
    return train, valid


class MF(nn.Module):
    def __init__(self, n_users, n_items, dim):
        super().__init__()
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)
        self.item_bias = nn.Embedding(n_items, 1)
        nn.init.normal_(self.user.weight, std=0.1)
        nn.init.normal_(self.item.weight, std=0.1)
        nn.init.zeros_(self.item_bias.weight)

    def score(self, u, i):
        return (self.user(u) * self.item(i)).sum(-1) + self.item_bias(i).squeeze(-1)

    def all_scores(self, u):
        return self.user(u) @ self.item.weight.t() + self.item_bias.weight.t()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--users", type=int, default=64)
    p.add_argument("--catalogue", type=int, default=120)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    train_log, valid_log = make_log(args.users, args.catalogue, gen)

    item2idx = {}
    for _, raw in train_log:
        item2idx.setdefault(raw, len(item2idx))
    oov = len(item2idx)  # bucket for ids unseen in training
    n_items = len(item2idx)

    def encode(log):
        return (torch.tensor([u for u, _ in log]),
                torch.tensor([item2idx.get(raw, oov) for _, raw in log]))

    tr_u, tr_i = encode(train_log)
    va_u, va_i = encode(valid_log)
    seen = torch.zeros(args.users, n_items, dtype=torch.bool)
    seen[tr_u, tr_i] = True

    model = MF(args.users, n_items, args.dim)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(tr_u), generator=gen)
        total, n = 0.0, 0
        for b in range(0, len(perm), args.batch_size):
            idx = perm[b:b + args.batch_size]
            u, pos = tr_u[idx], tr_i[idx]
            neg = torch.randint(0, n_items, pos.shape, generator=gen)
            pos_s, neg_s = model.score(u, pos), model.score(u, neg)
            diff = pos_s - neg_s
            diff.clamp_(-10.0, 10.0)
            loss = -F.logsigmoid(diff).mean() + 1e-4 * model.user(u).pow(2).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            n += 1
        print(f"epoch {epoch} bpr_loss {total / n:.6f}")
        model.eval()
        with torch.no_grad():
            scores = model.all_scores(va_u)
            scores[seen[va_u]] = float("-inf")
            target = model.score(va_u, va_i)
            rank = (scores > target[:, None]).sum(1)
            hr10 = (rank < 10).float().mean().item()
        print(f"epoch {epoch} valid hr@10 {hr10:.6f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
