import torch
from torch.utils.data import Dataset

CLS, PAD = 1, 0


class MotifDataset(Dataset):
    """Class = which of 3 motif tokens (10, 11, 12) occurs most often; filler tokens 13..99."""

    def __init__(self, n, seq_len, seed):
        g = torch.Generator().manual_seed(seed)
        x = torch.randint(13, 100, (n, seq_len), generator=g)
        counts = torch.randint(0, 4, (n, 3), generator=g)
        y = torch.empty(n, dtype=torch.long)
        for i in range(n):
            c = counts[i].clone()
            k = int(torch.randint(0, 3, (1,), generator=g))
            c[k] = c.max() + 1
            y[i] = k
            toks = torch.cat([torch.full((int(c[j]),), 10 + j) for j in range(3)])
            pos = torch.randperm(seq_len - 1, generator=g)[: len(toks)] + 1
            x[i, pos] = toks
        x[:, 0] = CLS
        self.x, self.y = x, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"input_ids": self.x[i], "attention_mask": torch.ones_like(self.x[i]), "labels": self.y[i]}
