import torch


def markov_chain(vocab, gen, temperature=0.5):
    logits = torch.randn(vocab, vocab, generator=gen) / temperature
    return logits.softmax(-1)


def markov_sequences(trans, n, seq_len, gen):
    vocab = trans.size(0)
    seqs = torch.zeros(n, seq_len, dtype=torch.long)
    seqs[:, 0] = torch.randint(0, vocab, (n,), generator=gen)
    for t in range(1, seq_len):
        seqs[:, t] = torch.multinomial(trans[seqs[:, t - 1]], 1, generator=gen).squeeze(1)
    return seqs
