import torch
import torch.nn as nn


def add_self_loops(edge_index, edge_weight, num_nodes, fill_value=1.0):
    loop = torch.arange(num_nodes, device=edge_index.device)
    loop_index = torch.stack([loop, loop], dim=0)
    loop_weight = torch.full((num_nodes,), fill_value, dtype=edge_weight.dtype, device=edge_weight.device)
    return torch.cat([edge_index, loop_index], dim=1), torch.cat([edge_weight, loop_weight], dim=0)


def gcn_norm(edge_index, edge_weight, num_nodes):
    if edge_weight is None:
        edge_weight = torch.ones(edge_index.size(1))
    edge_index, edge_weight = add_self_loops(edge_index, edge_weight, num_nodes)
    row, col = edge_index[0], edge_index[1]
    deg = torch.zeros(num_nodes, dtype=edge_weight.dtype).scatter_add(0, col, edge_weight)
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt = deg_inv_sqrt.masked_fill(deg_inv_sqrt == float("inf"), 0.0)
    return edge_index, deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]


class GCNConv(nn.Module):
    """Kipf & Welling graph convolution, symmetric normalisation, optional caching (PyG style)."""

    def __init__(self, in_channels, out_channels, cached=False, bias=True):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None
        self.cached = cached
        self._cached_edge_index = None

    def reset_cache(self):
        self._cached_edge_index = None

    def forward(self, x, edge_index, edge_weight=None):
        num_nodes = x.size(0)
        if self.cached and self._cached_edge_index is not None:
            edge_index, norm = self._cached_edge_index
        else:
            edge_index, norm = gcn_norm(edge_index, edge_weight, num_nodes)
            if self.cached:
                self._cached_edge_index = (edge_index, norm)

        x = self.lin(x)
        src, dst = edge_index[0], edge_index[1]
        msg = norm.view(-1, 1) * x.index_select(0, src)
        out = torch.zeros_like(x).index_add(0, dst, msg)
        if self.bias is not None:
            out = out + self.bias
        return out
