import json
import os

import torch


def load_config(name="config.json"):
    with open(os.path.join(os.path.dirname(__file__), name)) as f:
        return json.load(f)


def make_sbm_graph(num_nodes, num_classes, feat_dim, p_in, p_out, seed):
    """Stochastic block model with class-dependent Gaussian features (+ self loops)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(num_nodes) % num_classes
    same = y[:, None] == y[None, :]
    prob = torch.where(same, torch.tensor(p_in), torch.tensor(p_out))
    adj = torch.rand(num_nodes, num_nodes, generator=g) < prob
    adj = adj | adj.t()
    adj.fill_diagonal_(True)
    src, dst = adj.nonzero(as_tuple=True)
    centers = torch.randn(num_classes, feat_dim, generator=g)
    x = centers[y] + 1.5 * torch.randn(num_nodes, feat_dim, generator=g)
    perm = torch.randperm(num_nodes, generator=g)
    train_mask = torch.zeros(num_nodes, dtype=torch.bool)
    train_mask[perm[: num_nodes // 2]] = True
    return x, torch.stack([src, dst]), y, train_mask


def edge_softmax(scores, index, num_nodes):
    """Softmax of edge scores over the incoming edges of every destination node."""
    H = scores.shape[1]
    smax = torch.full((num_nodes, H), float("-inf")).scatter_reduce(
        0, index[:, None].expand(-1, H), scores, reduce="amax", include_self=True)
    ex = (scores - smax[index]).exp()
    denom = torch.zeros(num_nodes, H).index_add(0, index, ex)
    return ex / (denom[index] + 1e-16)


def aggregate(messages, index, num_nodes, aggr):
    """Reduce edge messages [E, H, C] onto destination nodes."""
    E, H, C = messages.shape
    if aggr == "sum":
        return torch.zeros(num_nodes, H, C).index_add(0, index, messages)
    if aggr == "max":
        out = torch.zeros(num_nodes, H, C)
        return out.scatter_reduce(0, index[:, None, None].expand(-1, H, C), messages,
                                  reduce="amax", include_self=False)
    raise ValueError(f"unknown aggregation {aggr!r}")


def scatter_sum(values, index, num_nodes):
    return torch.zeros((num_nodes,) + values.shape[1:]).index_add(0, index, values)
