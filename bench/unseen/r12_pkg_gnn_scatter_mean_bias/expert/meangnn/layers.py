import torch
import torch.nn as nn


def add_self_loops(edge_index, num_nodes):
    loops = torch.arange(num_nodes, device=edge_index.device)
    return torch.cat([edge_index, torch.stack([loops, loops])], dim=1)


class MessagePassing(nn.Module):
    """Minimal gather -> message -> scatter-reduce -> update, following PyG's design."""

    def __init__(self, aggr="mean"):
        super().__init__()
        self.aggr = aggr

    def message(self, x_j):
        return x_j

    def aggregate(self, msg, index, dim_size):
        out = msg.new_zeros(dim_size, msg.size(-1))
        idx = index.unsqueeze(-1).expand_as(msg)
        return out.scatter_reduce(0, idx, msg, reduce=self.aggr, include_self=False)

    def propagate(self, edge_index, x):
        src, dst = edge_index
        msg = self.message(x[src])
        return self.aggregate(msg, dst, x.size(0))


class MeanConv(MessagePassing):
    """x_i' = mean_{j in N(i) u {i}} W x_j + b   (GCN-style layer with mean aggregation)."""

    def __init__(self, in_channels, out_channels):
        super().__init__(aggr="mean")
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.empty(out_channels))
        self.reset_parameters()

    def reset_parameters(self):
        self.lin.reset_parameters()
        self.bias.data.zero_()

    def forward(self, x, edge_index):
        # Step 1: add self-loops to the adjacency matrix.
        edge_index = add_self_loops(edge_index, x.size(0))
        # Step 2: linearly transform node feature matrix.
        x = self.lin(x)
        # Step 3-4: start propagating messages (mean over neighbours).
        out = self.propagate(edge_index, x)
        # Step 5: apply a final bias vector.
        out = out + self.bias
        return out
