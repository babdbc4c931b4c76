import torch
from torch.utils.data import Dataset

N_LABELS = 4


class MultiLabelTokens(Dataset):
    """Label j is on iff marker token 10+j occurs. Label 3 was only annotated for part of the
    corpus (label_mask False = unknown, stored as 0)."""

    def __init__(self, n, seq_len, seed, known_frac=0.5):
        g = torch.Generator().manual_seed(seed)
        x = torch.randint(20, 100, (n, seq_len), generator=g)
        y = (torch.rand(n, N_LABELS, generator=g) < 0.4).float()
        for i in range(n):
            for j in range(N_LABELS):
                if y[i, j] > 0:
                    x[i, torch.randint(1, seq_len, (2,), generator=g)] = 10 + j
        x[:, 0] = 1  # [CLS]
        known = torch.ones(n, N_LABELS, dtype=torch.bool)
        known[:, 3] = torch.rand(n, generator=g) < known_frac
        self.x, self.full_y, self.known = x, y, known
        self.y = torch.where(known, y, torch.zeros_like(y))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"input_ids": self.x[i], "attention_mask": torch.ones_like(self.x[i]),
                "labels": self.y[i], "label_mask": self.known[i]}
