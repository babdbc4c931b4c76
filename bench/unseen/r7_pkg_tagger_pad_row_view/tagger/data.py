import torch

from .vocab import IGNORE, N_TAGS, N_WORDS, PAD


def make_corpus(n, max_len, seed):
    """Word ids 1..N_WORDS-1; the tag of a word depends on the word and on its left neighbour."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(4, max_len + 1, (n,), generator=g)
    words = torch.randint(1, N_WORDS, (n, max_len), generator=g)
    prev = torch.cat([torch.zeros(n, 1, dtype=torch.long), words[:, :-1]], dim=1)
    tags = (words % N_TAGS + (prev % 3 == 0).long()) % N_TAGS
    pos = torch.arange(max_len)[None, :]
    real = pos < lengths[:, None]
    words = torch.where(real, words, torch.full_like(words, PAD))
    tags = torch.where(real, tags, torch.full_like(tags, IGNORE))
    return words, tags


def batches(words, tags, batch_size, gen):
    order = torch.randperm(len(words), generator=gen)
    for i in range(0, len(words), batch_size):
        idx = order[i:i + batch_size]
        yield words[idx], tags[idx]
