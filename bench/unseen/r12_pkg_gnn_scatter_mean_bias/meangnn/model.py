import torch.nn as nn
import torch.nn.functional as F

from .layers import MeanConv


class MeanGNN(nn.Module):
    def __init__(self, in_channels, hidden, num_classes, dropout=0.3):
        super().__init__()
        self.conv1 = MeanConv(in_channels, hidden)
        self.conv2 = MeanConv(hidden, num_classes)
        self.dropout = dropout

    def forward(self, x, edge_index):
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.conv1(x, edge_index).relu()
        x = F.dropout(x, p=self.dropout, training=self.training)
        return self.conv2(x, edge_index)
