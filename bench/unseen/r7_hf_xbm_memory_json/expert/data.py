import torch
from torch.utils.data import Dataset


class TopicDataset(Dataset):
    """Each class has its own token distribution; sequences are drawn from a mix of the
    class distribution and a shared background distribution."""

    def __init__(self, n, seq_len, vocab, n_classes, seed, mix=0.35):
        g = torch.Generator().manual_seed(1234)  # topic distributions shared by all splits
        topics = torch.softmax(2.0 * torch.randn(n_classes, vocab, generator=g), dim=1)
        background = torch.full((vocab,), 1.0 / vocab)
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, n_classes, (n,), generator=g)
        probs = mix * topics[self.labels] + (1 - mix) * background
        self.input_ids = torch.multinomial(probs, seq_len, replacement=True, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "labels": self.labels[i]}
