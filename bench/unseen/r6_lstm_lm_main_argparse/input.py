"""Word-level LSTM language model trained with truncated BPTT (after pytorch/examples)."""
import argparse
import csv
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, inp, hidden):
        emb = self.drop(self.encoder(inp))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def make_corpus(n_tokens, vocab, seed=1):
    g = torch.Generator().manual_seed(seed)
    trans = torch.softmax(2.5 * torch.randn(vocab, vocab, generator=g), dim=1)
    ids = torch.zeros(n_tokens, dtype=torch.long)
    for i in range(1, n_tokens):
        ids[i] = torch.multinomial(trans[ids[i - 1]], 1, generator=g)
    return ids


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[:nbatch * bsz].view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def main():
    parser = argparse.ArgumentParser(description="LSTM language model")
    parser.add_argument("--vocab", type=int, default=40)
    parser.add_argument("--emsize", type=int, default=32)
    parser.add_argument("--nhid", type=int, default=64)
    parser.add_argument("--nlayers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--bptt", type=int, default=20)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", type=str, default="checkpoints/lstm_lm.pt")
    parser.add_argument("--log", type=str, default="train_log.csv")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    corpus = make_corpus(6000, args.vocab)
    train_data = batchify(corpus[:5000], args.batch_size)
    val_data = batchify(corpus[5000:], 8)

    model = RNNModel(args.vocab, args.emsize, args.nhid, args.nlayers, args.dropout)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    save_path = os.path.join(HERE, args.save)
    os.makedirs(os.path.dirname(save_path), exist_ok=True)
    log_file = open(os.path.join(HERE, args.log), "w", newline="")
    writer = csv.writer(log_file)
    writer.writerow(["epoch", "train_loss", "val_loss"])
    best_val = None

    for epoch in range(args.epochs):
        model.train()
        hidden = model.init_hidden(args.batch_size)
        total, n = 0.0, 0
        for i in range(0, train_data.size(0) - 1, args.bptt):
            data, targets = get_batch(train_data, i, args.bptt)
            optimizer.zero_grad()
            output, hidden = model(data, hidden)
            loss = F.cross_entropy(output.view(-1, args.vocab), targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            total += loss.item()
            n += 1

        model.eval()
        val_total, val_n = 0.0, 0
        with torch.no_grad():
            val_hidden = model.init_hidden(8)
            for i in range(0, val_data.size(0) - 1, args.bptt):
                data, targets = get_batch(val_data, i, args.bptt)
                output, val_hidden = model(data, val_hidden)
                val_total += F.cross_entropy(output.view(-1, args.vocab), targets).item() * len(data)
                val_n += len(data)
        val_loss = val_total / val_n
        print(f"epoch {epoch} train loss {total / n:.4f} val loss {val_loss:.4f}")
        writer.writerow([epoch, f"{total / n:.4f}", f"{val_loss:.4f}"])
        if best_val is None or val_loss < best_val:
            torch.save(model.state_dict(), save_path)
            best_val = val_loss

    log_file.close()
    print(f"best val loss {best_val:.4f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
