import torch


def make_copy_task(n, src_len, vocab_size, n_oov, seed):
    """Summary = every other source word followed by EOS; some words are OOV and must be copied."""
    g = torch.Generator().manual_seed(seed)
    src_ext = torch.randint(4, vocab_size + n_oov, (n, src_len), generator=g)
    src = src_ext.masked_fill(src_ext >= vocab_size, 1)          # encoder sees UNK for OOV words
    summary = src_ext[:, ::2]
    eos = torch.full((n, 1), 3, dtype=torch.long)
    tgt_out = torch.cat([summary, eos], 1)                       # extended ids
    bos = torch.full((n, 1), 2, dtype=torch.long)
    tgt_in = torch.cat([bos, summary], 1).masked_fill(torch.cat([bos, summary], 1) >= vocab_size, 1)
    return src, src_ext, tgt_in, tgt_out
