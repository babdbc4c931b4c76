import torch


def make_identities(n_ids, per_id, dim, seed):
    """Synthetic 're-id' features: each identity is a cluster in a random low-rank subspace."""
    g = torch.Generator().manual_seed(seed)
    basis = torch.randn(6, dim, generator=g)
    codes = torch.randn(n_ids, 6, generator=g)
    centers = codes @ basis
    x = centers.repeat_interleave(per_id, 0) + 0.9 * torch.randn(n_ids * per_id, dim, generator=g)
    y = torch.arange(n_ids).repeat_interleave(per_id)
    return x, y
