import torch


def stochastic_block_graph(num_nodes=240, num_classes=4, p_in=0.08, p_out=0.008,
                           num_features=16, seed=0):
    """Undirected SBM graph; features are noisy class prototypes (half the dims are noise)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(num_nodes) % num_classes
    y = y[torch.randperm(num_nodes, generator=g)]
    same = y.unsqueeze(0) == y.unsqueeze(1)
    prob = torch.where(same, torch.full_like(same, p_in, dtype=torch.float),
                       torch.full_like(same, p_out, dtype=torch.float))
    upper = torch.triu(torch.rand(num_nodes, num_nodes, generator=g) < prob, diagonal=1)
    adj = upper | upper.t()
    edge_index = adj.nonzero().t().contiguous()          # [2, E], both directions
    protos = torch.randn(num_classes, num_features, generator=g)
    x = 0.6 * protos[y] + torch.randn(num_nodes, num_features, generator=g)
    perm = torch.randperm(num_nodes, generator=g)
    train_mask = torch.zeros(num_nodes, dtype=torch.bool)
    train_mask[perm[: num_nodes // 4]] = True
    test_mask = ~train_mask
    return x, edge_index, y, train_mask, test_mask
