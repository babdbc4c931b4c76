import torch
import torch.nn as nn

from .functions import ScaledTanh


class SumMeanConv(nn.Module):
    """Neighbour sum via index_add_ into a fresh buffer, then degree normalisation and bias."""

    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, edge_index):
        src, dst = edge_index
        h = self.lin(x)
        out = h.new_zeros(h.shape).index_add_(0, dst, h[src])   # IndexAdd saves no output
        out += h                                                # self loop, still legal
        deg = torch.bincount(dst, minlength=x.size(0)).float().add_(1.0).unsqueeze(1)
        out = out / deg
        out += self.bias                                        # Div saved deg, not out
        return out


class ScratchRNN(nn.Module):
    """Elman RNN over node-feature sequences; states written into a buffer, never read back."""

    def __init__(self, cin, hidden):
        super().__init__()
        self.ih = nn.Linear(cin, hidden)
        self.hh = nn.Linear(hidden, hidden, bias=False)
        self.hidden = hidden

    def forward(self, seq):                    # (B, T, C)
        B, T, _ = seq.shape
        states = seq.new_zeros(B, T, self.hidden)
        h = seq.new_zeros(B, self.hidden)
        for t in range(T):
            h = torch.tanh(self.ih(seq[:, t]) + self.hh(h))
            states[:, t] = h
        return states


class Policy(nn.Module):
    def __init__(self, cin, hidden, n_actions):
        super().__init__()
        self.rnn = ScratchRNN(cin, hidden)
        self.conv = SumMeanConv(hidden, hidden)
        self.head = nn.Linear(hidden, n_actions)

    def forward(self, seq, edge_index, action_mask):
        states = self.rnn(seq)
        z = states.mean(dim=1)
        z = self.conv(z, edge_index)
        z.relu_()                                      # output of Add, nothing saved it
        logits = self.head(z)
        logits.masked_fill_(~action_mask, -1e9)        # Linear does not save its output
        return ScaledTanh.apply(logits, 10.0)
