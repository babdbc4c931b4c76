import torch
from torch.utils.data import Dataset

PAD, CLS = 0, 1


class VarLenDataset(Dataset):
    """Variable-length token sequences; label = which of two marker tokens appears first."""

    def __init__(self, n, min_len, max_len, seed):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for _ in range(n):
            L = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
            ids = torch.randint(10, 100, (L,), generator=g)
            p = torch.randperm(L - 1, generator=g)[:2] + 1
            ids[p[0]], ids[p[1]] = 4, 5
            ids[0] = CLS
            self.items.append((ids, int(p[0] < p[1])))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        ids, y = self.items[i]
        return {"input_ids": ids, "labels": y}


def pad_collate(features):
    """Dynamic padding: pad to the longest sequence of the batch."""
    longest = max(len(f["input_ids"]) for f in features)
    ids = torch.full((len(features), longest), PAD, dtype=torch.long)
    for i, f in enumerate(features):
        ids[i, : len(f["input_ids"])] = f["input_ids"]
    return {"input_ids": ids, "attention_mask": (ids != PAD).long(),
            "labels": torch.tensor([f["labels"] for f in features])}
