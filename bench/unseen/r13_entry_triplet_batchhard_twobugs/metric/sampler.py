import torch


class PKSampler:
    """P identities x K instances per batch."""

    def __init__(self, labels, p, k, generator):
        self.labels, self.p, self.k, self.gen = labels, p, k, generator
        self.ids = labels.unique()

    def sample(self):
        chosen = self.ids[torch.randperm(len(self.ids), generator=self.gen)[:self.p]]
        idx = []
        for c in chosen:
            pool = (self.labels == c).nonzero().squeeze(1)
            idx.append(pool[torch.randperm(len(pool), generator=self.gen)[:self.k]])
        return torch.cat(idx)
