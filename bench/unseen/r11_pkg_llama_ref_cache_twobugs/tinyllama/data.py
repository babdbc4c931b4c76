import torch


class ModularStreams:
    """Token streams x[t+1] = (a * x[t] + b) % V with one of a few (a, b) rules per stream.

    The rule is not given to the model: it has to infer it from the prefix (in-context),
    which is what the attention layers are for.
    """

    RULES = [(1, 1), (1, 3), (5, 2), (7, 5)]

    def __init__(self, vocab_size: int, seed: int = 0):
        self.V = vocab_size
        self.g = torch.Generator().manual_seed(seed)

    def batch(self, batch_size: int, seq_len: int) -> torch.Tensor:
        rules = torch.randint(len(self.RULES), (batch_size,), generator=self.g)
        x = torch.empty(batch_size, seq_len + 1, dtype=torch.long)
        x[:, 0] = torch.randint(self.V, (batch_size,), generator=self.g)
        a = torch.tensor([self.RULES[r][0] for r in rules])
        b = torch.tensor([self.RULES[r][1] for r in rules])
        for t in range(seq_len):
            x[:, t + 1] = (a * x[:, t] + b) % self.V
        # 5% of the tokens are corrupted
        noise = torch.rand(batch_size, seq_len + 1, generator=self.g) < 0.05
        x[noise] = torch.randint(self.V, (int(noise.sum()),), generator=self.g)
        return x
