import torch


def make_sequences(n, n_segments, seg_len, vocab, gen):
    """Each segment is the previous one shifted by a per-sequence offset (mod vocab),
    so tokens of segment s+1 are predictable only from the memory of segment s."""
    first = torch.randint(0, vocab, (n, 1, seg_len), generator=gen)
    offset = torch.randint(1, 4, (n, 1, 1), generator=gen)
    steps = torch.arange(n_segments).view(1, -1, 1)
    return (first + offset * steps) % vocab          # (n, n_segments, seg_len)
