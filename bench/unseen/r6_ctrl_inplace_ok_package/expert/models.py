import torch
import torch.nn as nn
import torch.nn.functional as F


class StatefulTagger(nn.Module):
    """GRU encoder over consecutive windows plus an MLP head (BN + in-place ReLU)."""

    def __init__(self, in_dim, hidden, n_classes, dropout=0.1):
        super().__init__()
        self.gru = nn.GRU(in_dim, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, hidden)
        self.bn = nn.BatchNorm1d(hidden)
        self.act = nn.ReLU(inplace=True)
        self.out = nn.Linear(hidden, n_classes)
        self.dropout = dropout
        self.register_buffer("logit_scale", torch.tensor(1.0))

    def forward(self, x, h=None):
        seq, h = self.gru(x, h)
        b, t, d = seq.shape
        z = self.fc(seq.reshape(b * t, d))
        z = self.act(self.bn(z))
        z = F.dropout(z, self.dropout, self.training)
        logits = self.out(z)
        logits.mul_(self.logit_scale)
        return logits.view(b, t, -1), h
