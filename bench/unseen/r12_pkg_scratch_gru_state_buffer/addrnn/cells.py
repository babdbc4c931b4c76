import torch
import torch.nn as nn


class GRUCell(nn.Module):
    """GRU cell written out (Cho et al. 2014), same equations as torch.nn.GRUCell."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.x2h = nn.Linear(input_size, 3 * hidden_size)
        self.h2h = nn.Linear(hidden_size, 3 * hidden_size)
        std = 1.0 / hidden_size ** 0.5
        for w in self.parameters():
            nn.init.uniform_(w, -std, std)

    def forward(self, x, h):
        gx_r, gx_z, gx_n = self.x2h(x).chunk(3, dim=-1)
        gh_r, gh_z, gh_n = self.h2h(h).chunk(3, dim=-1)
        r = torch.sigmoid(gx_r + gh_r)
        z = torch.sigmoid(gx_z + gh_z)
        n = torch.tanh(gx_n + r * gh_n)
        return (1 - z) * n + z * h
