import torch
import torch.nn as nn
import torch.nn.functional as F

from .layers import GCNConv


class EdgeGate(nn.Module):
    """One learnable logit per undirected edge slot; sigmoid gives the edge weight."""

    def __init__(self, num_edges, init=2.0):
        super().__init__()
        self.logit = nn.Parameter(torch.full((num_edges,), init))

    def forward(self):
        return torch.sigmoid(self.logit)


class GatedGCN(nn.Module):
    def __init__(self, in_dim, hidden, num_classes, num_edges, dropout):
        super().__init__()
        self.gate = EdgeGate(num_edges)
        self.conv1 = GCNConv(in_dim, hidden, cached=False)
        self.conv2 = GCNConv(hidden, num_classes, cached=False)
        self.dropout = dropout

    def forward(self, x, edge_index):
        w = self.gate()
        h = F.relu(self.conv1(x, edge_index, w))
        h = F.dropout(h, p=self.dropout, training=self.training)
        return self.conv2(h, edge_index, w), w
