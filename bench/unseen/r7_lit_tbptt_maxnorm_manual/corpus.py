import torch
from torch.utils.data import DataLoader, Dataset


def make_stream(n_tokens, vocab, seed=0, grammar_seed=0):
    """A noisy 'language': phrases from a small fixed grammar, some tokens corrupted."""
    gg = torch.Generator().manual_seed(grammar_seed)
    phrases = [torch.randint(1, vocab, (int(torch.randint(3, 7, (1,), generator=gg)),), generator=gg)
               for _ in range(6)]
    g = torch.Generator().manual_seed(seed)
    out = []
    while sum(len(p) for p in out) < n_tokens:
        out.append(phrases[int(torch.randint(0, len(phrases), (1,), generator=g))])
        out.append(torch.zeros(1, dtype=torch.long))  # separator
    s = torch.cat(out)[:n_tokens]
    noise = torch.rand(n_tokens, generator=g) < 0.05
    s[noise] = torch.randint(1, vocab, (int(noise.sum()),), generator=g)
    return s


class ContiguousChunks(Dataset):
    """Batchified stream (batch_size parallel streams); item i is the i-th bptt window of
    every stream, so consecutive items continue each other (stateful training)."""

    def __init__(self, stream, batch_size, bptt):
        n = stream.numel() // batch_size
        self.data = stream[: n * batch_size].view(batch_size, n)
        self.bptt = bptt
        self.n_chunks = (n - 1) // bptt

    def __len__(self):
        return self.n_chunks

    def __getitem__(self, i):
        s = i * self.bptt
        return self.data[:, s:s + self.bptt], self.data[:, s + 1:s + 1 + self.bptt]


def make_loader(n_tokens=6400, vocab=24, batch_size=16, bptt=20):
    ds = ContiguousChunks(make_stream(n_tokens, vocab), batch_size, bptt)
    # each item is already a (batch, bptt) block
    return DataLoader(ds, batch_size=None, shuffle=False)
