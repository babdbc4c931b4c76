import torch


def batch(cfg, g):
    """Placeholder prompt ids (0), then a sequence counting up by a per-row stride mod (V-2) (+2)."""
    n = cfg.seq_len - cfg.prompt_len + 1
    start = torch.randint(0, cfg.vocab_size - 2, (cfg.batch_size, 1), generator=g)
    stride = torch.randint(1, 4, (cfg.batch_size, 1), generator=g)
    body = (start + stride * torch.arange(n)) % (cfg.vocab_size - 2) + 2
    ids = torch.cat([torch.zeros(cfg.batch_size, cfg.prompt_len, dtype=torch.long), body], dim=1)
    return ids[:, :-1], ids[:, 1:]
