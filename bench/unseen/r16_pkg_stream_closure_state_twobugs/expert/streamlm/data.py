import torch


def make_stream(cfg):
    """Parallel token streams from a random sparse Markov chain."""
    g = torch.Generator().manual_seed(cfg.seed + 100)
    logits = 3.0 * torch.randn(cfg.vocab, cfg.vocab, generator=g)
    trans = torch.softmax(logits, dim=1)
    tok = torch.randint(0, cfg.vocab, (cfg.streams,), generator=g)
    out = [tok]
    for _ in range(cfg.length - 1):
        tok = torch.multinomial(trans[tok], 1, generator=g).squeeze(1)
        out.append(tok)
    return torch.stack(out, dim=1)  # (streams, length)


def segments(stream, bptt):
    for i in range(0, stream.shape[1] - 1 - bptt + 1, bptt):
        yield stream[:, i:i + bptt], stream[:, i + 1:i + 1 + bptt]
