"""TransE (Bordes et al. 2013) on a small synthetic knowledge graph.

Entities live in K clusters; relation r maps an entity of cluster c to one of
cluster (c + r) mod K.  Margin-ranking loss with corrupted heads/tails, entity
embeddings renormalised to the unit sphere before every minibatch as in the
paper (Algorithm 1, line 5).
"""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def build_graph(n_ent, n_rel, n_clusters, n_triples, gen):
    cluster = torch.arange(n_ent) % n_clusters
    heads = torch.randint(0, n_ent, (n_triples,), generator=gen)
    rels = torch.randint(0, n_rel, (n_triples,), generator=gen)
    tgt_cluster = (cluster[heads] + rels + 1) % n_clusters
    # pick a tail inside the target cluster
    offs = torch.randint(0, n_ent // n_clusters, (n_triples,), generator=gen)
    tails = tgt_cluster + offs * n_clusters
    return torch.stack([heads, rels, tails], dim=1)


class TransE(nn.Module):
    def __init__(self, n_ent, n_rel, dim, p_norm=1):
        super().__init__()
        self.n_ent = n_ent
        self.p_norm = p_norm
        # last row is a padding entity / relation (as in TransE-PyTorch)
        self.ent = nn.Embedding(n_ent + 1, dim, padding_idx=n_ent)
        self.rel = nn.Embedding(n_rel + 1, dim, padding_idx=n_rel)
        bound = 6.0 / dim ** 0.5
        nn.init.uniform_(self.ent.weight, -bound, bound)
        nn.init.uniform_(self.rel.weight, -bound, bound)
        with torch.no_grad():
            self.rel.weight[:-1] /= self.rel.weight[:-1].norm(p=1, dim=1, keepdim=True)

    def normalize_entities(self):
        # "e <- e / ||e||" for every entity before each minibatch
        with torch.no_grad():
            w = self.ent.weight[:-1, :]
            w.div_(w.norm(p=2, dim=1, keepdim=True))

    def distance(self, triples):
        h = self.ent(triples[:, 0])
        r = self.rel(triples[:, 1])
        t = self.ent(triples[:, 2])
        return (h + r - t).norm(p=self.p_norm, dim=1)

    def forward(self, pos, neg):
        self.normalize_entities()
        return self.distance(pos), self.distance(neg)


class MarginLoss:
    def __init__(self, margin):
        self.criterion = nn.MarginRankingLoss(margin=margin, reduction="mean")

    def __call__(self, pos_scores, neg_scores):
        y = torch.full((pos_scores.shape[0],), -1.0)
        return self.criterion(pos_scores, neg_scores, y)


def corrupt(batch, n_ent, gen):
    neg = batch.clone()
    head_or_tail = torch.randint(0, 2, (batch.shape[0],), generator=gen)
    rnd = torch.randint(0, n_ent, (batch.shape[0],), generator=gen)
    neg[:, 0] = torch.where(head_or_tail == 0, rnd, batch[:, 0])
    neg[:, 2] = torch.where(head_or_tail == 1, rnd, batch[:, 2])
    return neg


@torch.no_grad()
def hits_at_k(model, triples, k=10):
    all_t = torch.arange(model.n_ent)
    hits = 0
    for h, r, t in triples.tolist():
        cand = torch.stack([torch.full_like(all_t, h), torch.full_like(all_t, r), all_t], 1)
        d = model.distance(cand)
        rank = (d < d[t]).sum().item() + 1
        hits += int(rank <= k)
    return hits / len(triples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entities", type=int, default=60)
    ap.add_argument("--relations", type=int, default=3)
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--margin", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--out", default="out")
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    triples = build_graph(args.entities, args.relations, 6, 512, gen)
    loader = DataLoader(TensorDataset(triples), batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(2))

    model = TransE(args.entities, args.relations, args.dim)
    loss_fn = MarginLoss(args.margin)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for (pos,) in loader:
            neg = corrupt(pos, args.entities, gen)
            pos_d, neg_d = model(pos, neg)
            loss = loss_fn(pos_d, neg_d)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"epoch {epoch} step {step:3d} loss {loss.item():.6f}")
            step += 1
        sched.step()
        print(f"epoch {epoch} hits@10 {hits_at_k(model, triples[:40]):.3f}")

    os.makedirs(args.out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out, "transe.pt"))
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
