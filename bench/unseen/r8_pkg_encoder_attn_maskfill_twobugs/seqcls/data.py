import torch

PAD, X, Y = 0, 1, 2


def make_dataset(n, max_len, vocab, seed):
    """Padded sequences holding one X and one Y at random places; label 1 if X comes first."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(6, max_len + 1, (n,), generator=g)
    ids = torch.randint(3, vocab, (n, max_len), generator=g)
    labels = torch.empty(n, dtype=torch.long)
    for i in range(n):
        L = int(lengths[i])
        a, b = torch.randperm(L, generator=g)[:2].tolist()
        ids[i, a], ids[i, b] = X, Y
        ids[i, L:] = PAD
        labels[i] = int(a < b)
    return ids, labels


def iterate(ids, labels, batch_size, gen):
    order = torch.randperm(len(ids), generator=gen)
    for i in range(0, len(ids), batch_size):
        idx = order[i:i + batch_size]
        yield ids[idx], labels[idx]
