"""GRU sequence classifier with packed sequences and a SortaGrad-like curriculum (DeepSpeech2):
the first epoch visits the data sorted by length (which also suits pack_padded_sequence), later
epochs shuffle.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.data import DataLoader, Dataset

PAD = 0


class ToySequences(Dataset):
    """Label = whether token 3 occurs more often than token 4."""

    def __init__(self, n, vocab, min_len, max_len, gen):
        self.items = []
        for _ in range(n):
            length = int(torch.randint(min_len, max_len + 1, (1,), generator=gen))
            seq = torch.randint(1, vocab, (length,), generator=gen)
            label = int((seq == 3).sum() > (seq == 4).sum())
            self.items.append((seq, label))

    def sort_by_length(self, descending=True):
        self.items.sort(key=lambda it: len(it[0]), reverse=descending)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    lengths = torch.tensor([len(s) for s, _ in batch])
    padded = torch.full((len(batch), int(lengths.max())), PAD, dtype=torch.long)
    for i, (s, _) in enumerate(batch):
        padded[i, : len(s)] = s
    labels = torch.tensor([y for _, y in batch])
    return padded, lengths, labels


class GRUClassifier(nn.Module):
    def __init__(self, vocab, dim, hidden, n_cls):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.gru = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)
        self.norm = nn.LayerNorm(2 * hidden)
        self.head = nn.Linear(2 * hidden, n_cls)
        with torch.no_grad():
            self.emb.weight[PAD].zero_()

    def forward(self, tokens, lengths):
        x = self.emb(tokens)
        x.masked_fill_((tokens == PAD)[..., None], 0.0)          # keep pads exactly zero
        packed = pack_padded_sequence(x, lengths, batch_first=True)
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        mask = (tokens[:, : out.shape[1]] != PAD)[..., None]
        pooled = (out * mask).sum(1) / mask.sum(1)
        return self.head(self.norm(pooled))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args()

    torch.manual_seed(0)
    data = ToySequences(256, 12, 5, 30, torch.Generator().manual_seed(1))
    model = GRUClassifier(12, 16, 24, 2)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    running = None
    step = 0
    for epoch in range(args.epochs):
        sortagrad = epoch == 0
        if sortagrad:
            data.sort_by_length(descending=True)
        loader = DataLoader(data, batch_size=args.batch_size, shuffle=not sortagrad, collate_fn=collate,
                            generator=torch.Generator().manual_seed(epoch))
        for tokens, lengths, labels in loader:
            logits = model(tokens, lengths)
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            running = loss.detach() if running is None else 0.9 * running + 0.1 * loss.detach()
            print(f"epoch {epoch} step {step:3d} loss {loss.item():.6f} running {running.item():.6f}")
            step += 1
    os.makedirs("out", exist_ok=True)
    torch.save(model.state_dict(), "out/gru_cls.pt")
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
