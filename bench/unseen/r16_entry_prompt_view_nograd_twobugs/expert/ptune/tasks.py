import torch

# dict registry: task name -> labelling function on token ids
TASKS = {
    "has3": lambda t: (t == 3).any(dim=1).long(),
    "parity5": lambda t: ((t == 5).sum(dim=1) % 2).long(),
}


def sample_batch(cfg, name, generator):
    tokens = torch.randint(0, cfg.vocab, (cfg.batch, cfg.seq_len), generator=generator)
    return tokens, TASKS[name](tokens)
