import torch


def adding_problem(n, seq_len, seed):
    """Hochreiter & Schmidhuber's adding problem: sum the two values whose marker is 1."""
    g = torch.Generator().manual_seed(seed)
    values = torch.rand(n, seq_len, generator=g)
    markers = torch.zeros(n, seq_len)
    first = torch.randint(0, seq_len // 2, (n,), generator=g)
    second = torch.randint(seq_len // 2, seq_len, (n,), generator=g)
    markers[torch.arange(n), first] = 1.0
    markers[torch.arange(n), second] = 1.0
    x = torch.stack([values, markers], dim=-1)                 # (N, T, 2)
    y = (values * markers).sum(dim=1, keepdim=True)            # (N, 1)
    return x, y
