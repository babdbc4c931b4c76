import torch
import torch.nn as nn
import torch.nn.functional as F

from .utils import aggregate, edge_softmax


class GATLayer(nn.Module):
    def __init__(self, d_in, d_out, heads, aggr="sum", attn_dropout=0.0, concat=True):
        super().__init__()
        self.heads, self.d_out, self.aggr, self.concat = heads, d_out, aggr, concat
        self.lin = nn.Linear(d_in, heads * d_out, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, d_out) * 0.3)
        self.att_dst = nn.Parameter(torch.randn(1, heads, d_out) * 0.3)
        self.bias = nn.Parameter(torch.zeros(heads, d_out))
        self.attn_dropout = attn_dropout
        self.last_alpha = None

    def forward(self, x, edge_index):
        N = x.shape[0]
        src, dst = edge_index
        h = self.lin(x).view(N, self.heads, self.d_out)
        a_src = (h * self.att_src).sum(-1)
        a_dst = (h * self.att_dst).sum(-1)
        scores = F.leaky_relu(a_src[src] + a_dst[dst], 0.2)
        alpha = edge_softmax(scores, dst, N)                      # [E, H]
        if self.attn_dropout > 0:
            alpha = F.dropout(alpha, self.attn_dropout, self.training)
        self.last_alpha = alpha                                   # kept for the attention regulariser
        messages = h[src] * alpha.unsqueeze(-1)                   # [E, H, C]
        out = aggregate(messages, dst, N, self.aggr)              # [N, H, C]
        out += self.bias
        return out.reshape(N, -1) if self.concat else out.mean(1)


class GAT(nn.Module):
    def __init__(self, d_in, n_classes, hidden, heads, layers, attn_dropout=0.0):
        super().__init__()
        dims = [d_in] + [hidden * heads] * (len(layers) - 1)
        self.layers = nn.ModuleList()
        for i, spec in enumerate(layers):
            last = i == len(layers) - 1
            self.layers.append(GATLayer(dims[i], n_classes if last else hidden, heads,
                                        aggr=spec["aggr"], attn_dropout=attn_dropout,
                                        concat=not last))

    def forward(self, x, edge_index):
        for i, layer in enumerate(self.layers):
            x = layer(x, edge_index)
            if i < len(self.layers) - 1:
                x = F.elu(x)
        return x

    def attention_maps(self):
        return [layer.last_alpha for layer in self.layers]
