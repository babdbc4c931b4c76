import torch


def copy_task(n, block_size, vocab, g, offset):
    """Sequences: random prefix, separator 1, then the prefix again shifted by `offset` (mod vocab-2)."""
    half = block_size // 2
    prefix = torch.randint(2, vocab, (n, half), generator=g)
    shifted = (prefix - 2 + offset) % (vocab - 2) + 2
    seq = torch.cat([prefix, torch.ones(n, 1, dtype=torch.long), shifted], dim=1)[:, : block_size + 1]
    x, y = seq[:, :-1].clone(), seq[:, 1:].clone()
    y[:, : half - 1] = -100  # only the copied half is scored
    return x, y
