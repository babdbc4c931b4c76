import torch


def markov_stream(length, vocab, gen):
    """A symbol stream from a sparse second-order Markov chain (learnable, not trivial)."""
    table = torch.randint(0, vocab, (vocab, vocab, 3), generator=torch.Generator().manual_seed(123))
    out = torch.empty(length, dtype=torch.long)
    out[0], out[1] = 0, 1
    choice = torch.randint(0, 3, (length,), generator=gen)
    for t in range(2, length):
        out[t] = table[out[t - 2], out[t - 1], choice[t]]
    return out


def batchify(stream, n_streams):
    """(T,) -> (n_streams, T // n_streams): each row is a contiguous piece of the stream."""
    usable = stream.numel() // n_streams * n_streams
    return stream[:usable].view(n_streams, -1)


def windows(data, bptt):
    for i in range(0, data.size(1) - 1, bptt):
        n = min(bptt, data.size(1) - 1 - i)
        yield data[:, i:i + n], data[:, i + 1:i + 1 + n]
