"""LSTM sequence classifier whose label is decided by the first tokens of a long,
noisy sequence (forget-gate bias initialised to 1, Jozefowicz et al. 2015).
Run: python input.py [--epochs 5 --forget-bias 1.0 ...]"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, N_CLASSES = 20, 4


def make_data(n, seq_len, seed):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(N_CLASSES, VOCAB, (n, seq_len), generator=g)
    labels = torch.randint(0, N_CLASSES, (n,), generator=g)
    tokens[:, 1] = labels               # the cue comes early, the model must remember it
    return tokens, labels


class LSTMClassifier(nn.Module):
    def __init__(self, emb_dim, hidden, layers, forget_bias):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, emb_dim)
        self.rnn = nn.LSTM(emb_dim, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, N_CLASSES)
        self.reset_parameters(forget_bias)

    def reset_parameters(self, forget_bias):
        with torch.no_grad():
            for i in range(self.rnn.num_layers):
                for name in (f"bias_ih_l{i}", f"bias_hh_l{i}"):
                    getattr(self.rnn, name).chunk(4)[1].fill_(forget_bias / 2)   # gates: i, f, g, o

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.out(h[:, -1])


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--seq-len", type=int, default=24)
    p.add_argument("--emb-dim", type=int, default=16)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--forget-bias", type=float, default=2.0)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    train_x, train_y = make_data(1024, args.seq_len, seed=1)
    val_x, val_y = make_data(512, args.seq_len, seed=2)
    model = LSTMClassifier(args.emb_dim, args.hidden, args.layers, args.forget_bias)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(train_x))
        total = 0.0
        for idx in perm.split(args.batch_size):
            loss = F.cross_entropy(model(train_x[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item() * len(idx)
        model.eval()
        with torch.no_grad():
            acc = (model(val_x).argmax(1) == val_y).float().mean().item()
        print(f"epoch {epoch} loss {total / len(train_x):.5f} val_acc {acc:.4f}")
    print(f"forget bias mean {model.rnn.bias_hh_l0.chunk(4)[1].mean().item():.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
