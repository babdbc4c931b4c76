import torch
from torch.utils.data import DataLoader, TensorDataset

PAD = 0


def make_split(n, vocab, max_len, seed):
    """Label 1 if 'trigger' tokens (1..4) outnumber 'blocker' tokens (5..8); rest is filler."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(6, max_len + 1, (n,), generator=g)
    x = torch.randint(1, vocab, (n, max_len), generator=g)
    pos = torch.arange(max_len)[None, :]
    x = torch.where(pos < lengths[:, None], x, torch.full_like(x, PAD))
    trig = ((x >= 1) & (x <= 4)).sum(1)
    block = ((x >= 5) & (x <= 8)).sum(1)
    y = (trig > block).long()
    return x, lengths, y


def loaders(vocab, max_len, batch_size, n_train=640, n_val=256):
    train = TensorDataset(*make_split(n_train, vocab, max_len, seed=11))
    val = TensorDataset(*make_split(n_val, vocab, max_len, seed=12))
    return (DataLoader(train, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(0)),
            DataLoader(val, batch_size=128))
