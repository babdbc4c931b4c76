import torch
import torch.nn as nn


class GatedAttentionMIL(nn.Module):
    """Gated attention pooling (Ilse et al. 2018) with QC-flagged tiles excluded from the pool."""

    def __init__(self, d_in, d_hid=32, d_att=16):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(d_in, d_hid), nn.ReLU())
        self.att_v = nn.Linear(d_hid, d_att)
        self.att_u = nn.Linear(d_hid, d_att)
        self.att_w = nn.Linear(d_att, 1)
        self.cls = nn.Linear(d_hid, 1)

    def forward(self, x, artefact):
        h = self.embed(x)                                       # [n, d_hid]
        s = self.att_w(torch.tanh(self.att_v(h)) * torch.sigmoid(self.att_u(h))).squeeze(-1)
        a = torch.softmax(s, dim=0)
        a.masked_fill_(artefact, 0.0)                           # drop QC-flagged tiles
        a = a / a.sum()
        z = a @ h
        return self.cls(z).squeeze(-1), a
