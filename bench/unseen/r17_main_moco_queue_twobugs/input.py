"""MoCo-v2 style contrastive pre-training of a small MLP encoder on tabular rows.

Two augmented views of every row go through a query encoder (trained by SGD)
and a key encoder (momentum copy of the query encoder).  A FIFO queue of past
keys provides the negatives.
"""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, d_hidden), nn.ReLU(), nn.Linear(d_hidden, d_out)
        )

    def forward(self, x):
        return self.net(x)


class MoCo(nn.Module):
    def __init__(self, d_in, dim=16, K=64, m=0.99, T=0.2):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = Encoder(d_in, 32, dim)
        # key encoder starts as an exact copy and then follows the query encoder
        self.encoder_k = copy.deepcopy(self.encoder_q)
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.mul_(self.m).add_(param_q.detach(), alpha=1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        bs = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % bs == 0
        self.queue[:, ptr:ptr + bs] = keys.T
        self.queue_ptr[0] = (ptr + bs) % self.K

    def forward(self, x_q, x_k):
        q = F.normalize(self.encoder_q(x_q), dim=1)
        self._momentum_update_key_encoder()
        with torch.no_grad():
            k = F.normalize(self.encoder_k(x_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue)
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self._dequeue_and_enqueue(k)
        return logits, labels


def augment(x, gen):
    noise = 0.15 * torch.randn(x.shape, generator=gen)
    keep = (torch.rand(x.shape, generator=gen) > 0.2).float()
    return (x + noise) * keep


def make_data(n=256, d=20, n_clusters=4):
    centers = 0.6 * torch.randn(n_clusters, d)
    y = torch.arange(n) % n_clusters
    x = centers[y] + 1.0 * torch.randn(n, d)
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--queue", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()

    torch.manual_seed(0)
    x, y = make_data()
    model = MoCo(x.shape[1], K=args.queue)
    opt = torch.optim.SGD(model.encoder_q.parameters(), lr=args.lr, momentum=0.9)
    gen = torch.Generator().manual_seed(1)

    for epoch in range(args.epochs):
        perm = torch.randperm(x.shape[0], generator=gen)
        total, n = 0.0, 0
        for i in range(0, x.shape[0], args.batch_size):
            xb = x[perm[i:i + args.batch_size]]
            logits, labels = model(augment(xb, gen), augment(xb, gen))
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            n += 1
        with torch.no_grad():
            z = F.normalize(model.encoder_q(x), dim=1)
            sim = z @ z.T
            sim.fill_diagonal_(-2.0)
            nn_acc = (y[sim.argmax(1)] == y).float().mean().item()
        print(f"epoch {epoch} loss {total / n:.5f} nn_acc {nn_acc:.5f} "
              f"queue_mean {model.queue.mean().item():.5f}")


if __name__ == "__main__":
    main()
