import torch


def make_sbm_graph(num_nodes, num_classes, feat_dim, p_in, p_out, feat_noise, train_frac, generator):
    """Stochastic block model with noisy inter-class edges and class-dependent features."""
    y = torch.arange(num_nodes) % num_classes
    y = y[torch.randperm(num_nodes, generator=generator)]
    same = y.view(-1, 1) == y.view(1, -1)
    prob = torch.where(same, torch.full((num_nodes, num_nodes), p_in), torch.full((num_nodes, num_nodes), p_out))
    upper = torch.triu(torch.rand(num_nodes, num_nodes, generator=generator) < prob, diagonal=1)
    adj = upper | upper.t()
    edge_index = adj.nonzero().t().contiguous()

    centers = torch.randn(num_classes, feat_dim, generator=generator)
    x = centers[y] + feat_noise * torch.randn(num_nodes, feat_dim, generator=generator)

    perm = torch.randperm(num_nodes, generator=generator)
    n_train = int(train_frac * num_nodes)
    train_mask = torch.zeros(num_nodes, dtype=torch.bool)
    train_mask[perm[:n_train]] = True
    val_mask = ~train_mask
    return x, y, edge_index, train_mask, val_mask
