import torch


def make_preference_pairs(vocab_size, n_pairs, prompt_len, response_len, seed):
    """Chosen response continues the prompt with a fixed rule (t -> 3t+1 mod V);
    the rejected response is random tokens."""
    g = torch.Generator().manual_seed(seed)
    prompts = torch.randint(0, vocab_size, (n_pairs, prompt_len), generator=g)
    chosen = torch.empty(n_pairs, response_len, dtype=torch.long)
    prev = prompts[:, -1]
    for t in range(response_len):
        prev = (3 * prev + 1) % vocab_size
        chosen[:, t] = prev
    rejected = torch.randint(0, vocab_size, (n_pairs, response_len), generator=g)
    chosen_seq = torch.cat([prompts, chosen], 1)
    rejected_seq = torch.cat([prompts, rejected], 1)
    mask = torch.zeros(n_pairs, prompt_len + response_len)
    mask[:, prompt_len:] = 1.0
    return chosen_seq, rejected_seq, mask
