import torch
from torch.utils.data import TensorDataset

A, B = 1, 2


def order_task(n, length, vocab, seed):
    """Every sequence holds one A and one B among filler tokens; label 1 iff A comes before B."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, vocab, (n, length), generator=g)
    for i in range(n):
        p = torch.randperm(length, generator=g)[:2]
        ids[i, p[0]], ids[i, p[1]] = A, B
    labels = ((ids == A).float().argmax(1) < (ids == B).float().argmax(1)).long()
    return TensorDataset(ids, labels)
