import torch


def majority_task(n, seq_len, vocab, gen):
    """Label 1 iff token 1 occurs more often than token 2 in the unpadded prefix (0 = pad)."""
    toks = torch.randint(1, vocab, (n, seq_len), generator=gen)
    # make tokens 1 and 2 frequent so the counts are informative
    hot = torch.rand(n, seq_len, generator=gen) < 0.5
    toks[hot] = torch.randint(1, 3, (int(hot.sum()),), generator=gen)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (n,), generator=gen)
    pad = torch.arange(seq_len)[None, :] >= lengths[:, None]
    toks[pad] = 0
    y = ((toks == 1).sum(1) > (toks == 2).sum(1)).long()
    return toks, y
