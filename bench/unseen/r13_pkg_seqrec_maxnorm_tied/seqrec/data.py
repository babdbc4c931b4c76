import torch


def make_sessions(n, n_items, n_clusters, seq_len, seed):
    """Sessions that mostly stay inside one item cluster, with some drift."""
    g = torch.Generator().manual_seed(seed)
    per = n_items // n_clusters
    cluster = torch.randint(0, n_clusters, (n,), generator=g)
    seqs = torch.empty(n, seq_len + 1, dtype=torch.long)
    for t in range(seq_len + 1):
        jump = torch.rand(n, generator=g) < 0.15
        cluster = torch.where(jump, (cluster + 1) % n_clusters, cluster)
        offset = torch.randint(0, per, (n,), generator=g)
        seqs[:, t] = cluster * per + offset
    return seqs[:, :-1], seqs[:, -1]


def batches(seqs, targets, batch_size, generator):
    perm = torch.randperm(seqs.shape[0], generator=generator)
    for i in range(0, seqs.shape[0], batch_size):
        idx = perm[i:i + batch_size]
        yield seqs[idx], targets[idx]
