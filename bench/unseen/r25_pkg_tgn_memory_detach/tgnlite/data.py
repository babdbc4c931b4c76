"""Synthetic continuous-time interaction stream with community structure."""
import torch


def make_stream(num_nodes, num_events, msg_dim, communities, seed):
    g = torch.Generator().manual_seed(seed)
    comm = torch.arange(num_nodes) % communities
    src = torch.randint(0, num_nodes, (num_events,), generator=g)
    same = torch.rand(num_events, generator=g) < 0.8
    rand_dst = torch.randint(0, num_nodes, (num_events,), generator=g)
    # pick a partner from the same community for most events
    offset = torch.randint(1, num_nodes // communities, (num_events,), generator=g) * communities
    comm_dst = (src + offset) % num_nodes
    dst = torch.where(same, comm_dst, rand_dst)
    t = torch.cumsum(torch.rand(num_events, generator=g), 0)
    proto = torch.randn(communities, msg_dim, generator=g)
    msg = proto[comm[src]] + 0.3 * torch.randn(num_events, msg_dim, generator=g)
    return src, dst, t, msg
