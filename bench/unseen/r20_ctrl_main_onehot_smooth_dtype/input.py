"""Control: GRU sequence tagger whose loss switches from hard labels to
label-smoothed soft targets after a warm-up.  The script crashes, but not in
autograd: F.one_hot returns int64, and smoothing it in place cannot store floats.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, vocab, emb, hidden, n_tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(hidden, n_tags)

    def forward(self, ids):
        x = self.embed(ids)
        x.mul_(1.5)                                  # embedding output: not saved, fine
        h, _ = self.rnn(x)
        h = self.proj(h)
        h.add_(0.1)                                  # Linear output: not saved, fine
        h = F.relu(h, inplace=True)
        return self.out(h)


def soft_cross_entropy(logits, soft_targets, mask):
    logp = F.log_softmax(logits, dim=-1)
    loss = -(soft_targets * logp).sum(-1)
    loss.masked_fill_(~mask, 0.0)
    return loss.sum() / mask.sum()


def make_data(n, seq_len, vocab, n_tags, gen):
    ids = torch.randint(1, vocab, (n, seq_len), generator=gen)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (n,), generator=gen)
    mask = torch.arange(seq_len)[None] < lengths[:, None]
    ids[~mask] = 0
    tags = (ids + torch.roll(ids, 1, dims=1)) % n_tags
    return ids, tags, mask


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=25)
    p.add_argument("--tags", type=int, default=5)
    p.add_argument("--seq-len", type=int, default=12)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--smooth-start", type=int, default=10)
    p.add_argument("--smoothing", type=float, default=0.1)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)
    ids, tags, mask = make_data(512, args.seq_len, args.vocab, args.tags, gen)
    model = Tagger(args.vocab, 16, 24, args.tags)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    losses = []
    for step in range(args.steps):
        b = torch.randint(0, ids.shape[0], (args.batch,), generator=gen)
        logits = model(ids[b])
        targets = F.one_hot(tags[b], args.tags)
        if step >= args.smooth_start:
            targets.mul_(1.0 - args.smoothing).add_(args.smoothing / args.tags)
        loss = soft_cross_entropy(logits, targets, mask[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print(f"final_loss {losses[-1]:.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
