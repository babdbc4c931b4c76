import torch
from torch.utils.data import Dataset

PAD = 0


class ToySequences(Dataset):
    """Variable-length token sequences; tag = 1 where the token is a 'name' (id >= 40)."""

    def __init__(self, n, vocab=60, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for _ in range(n):
            length = int(torch.randint(3, 11, (1,), generator=g))
            ids = torch.randint(1, vocab, (length,), generator=g)
            self.items.append((ids.tolist(), (ids >= 40).long().tolist()))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def pad_collate(batch):
    max_len = max(len(ids) for ids, _ in batch)
    tokens = torch.zeros(len(batch), max_len)
    tags = torch.full((len(batch), max_len), -100, dtype=torch.long)
    for i, (ids, t) in enumerate(batch):
        tokens[i, : len(ids)] = torch.tensor(ids)
        tags[i, : len(t)] = torch.tensor(t)
    return tokens, tags
