import functools

import torch


def sbm(num_nodes, num_classes, feat_dim, p_in, p_out, train_frac, gen):
    y = torch.arange(num_nodes) % num_classes
    y = y[torch.randperm(num_nodes, generator=gen)]
    same = y.view(-1, 1) == y.view(1, -1)
    prob = torch.where(same, torch.tensor(p_in), torch.tensor(p_out))
    upper = torch.triu(torch.rand(num_nodes, num_nodes, generator=gen) < prob, diagonal=1)
    edge_index = (upper | upper.t()).nonzero().t().contiguous()
    x = torch.randn(num_classes, feat_dim, generator=gen)[y] + 1.5 * torch.randn(num_nodes, feat_dim, generator=gen)
    train_mask = torch.rand(num_nodes, generator=gen) < train_frac
    return x, y, edge_index, train_mask


@functools.lru_cache(maxsize=4)
def self_loops(num_nodes):
    loop = torch.arange(num_nodes)
    return torch.stack([loop, loop])


def gcn_norm(edge_index, num_nodes):
    edge_index = torch.cat([edge_index, self_loops(num_nodes)], dim=1)
    w = torch.ones(edge_index.size(1))
    deg = torch.zeros(num_nodes).scatter_add_(0, edge_index[1], w)
    dis = deg.pow_(-0.5)
    dis.masked_fill_(dis == float("inf"), 0.0)
    return edge_index, dis[edge_index[0]] * w * dis[edge_index[1]]
