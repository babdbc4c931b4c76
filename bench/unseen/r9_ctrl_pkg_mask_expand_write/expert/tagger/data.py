import torch

PAD = 0


def make_corpus(n, cfg, gen):
    """Random token sequences; tag = (token + previous token) % n_tags, padded with PAD / -100."""
    lengths = torch.randint(cfg.min_len, cfg.max_len + 1, (n,), generator=gen)
    tokens = torch.randint(1, cfg.vocab, (n, cfg.max_len), generator=gen)
    prev = torch.cat([torch.zeros(n, 1, dtype=torch.long), tokens[:, :-1]], 1)
    tags = (tokens + prev) % cfg.n_tags
    pos = torch.arange(cfg.max_len).unsqueeze(0)
    pad = pos >= lengths.unsqueeze(1)
    tokens[pad] = PAD
    tags[pad] = -100
    return tokens, tags


def iterate(tokens, tags, batch_size, gen=None):
    order = torch.randperm(tokens.size(0), generator=gen) if gen is not None else torch.arange(tokens.size(0))
    for i in range(0, tokens.size(0), batch_size):
        idx = order[i:i + batch_size]
        # trim the batch to its longest sequence (dynamic padding)
        width = int((tokens[idx] != PAD).sum(1).max())
        yield tokens[idx, :width], tags[idx, :width]
