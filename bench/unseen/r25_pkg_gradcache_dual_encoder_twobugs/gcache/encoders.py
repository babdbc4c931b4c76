"""Two-tower encoder."""
import torch.nn as nn


def tower(dim_in, hidden, dim_out):
    return nn.Sequential(nn.Linear(dim_in, hidden), nn.GELU(), nn.Linear(hidden, dim_out))


class DualEncoder(nn.Module):
    def __init__(self, dim_in, hidden, dim_out):
        super().__init__()
        self.query = tower(dim_in, hidden, dim_out)
        self.doc = tower(dim_in, hidden, dim_out)
