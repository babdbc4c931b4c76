import torch


def make_bags(n_bags, seed, d=16, min_len=6, max_len=14):
    """Synthetic whole-slide-style bags: a bag is positive if it holds at least one 'tumour' tile.
    Some tiles are flagged as artefacts by QC (blur/pen marks) and must get zero attention."""
    g = torch.Generator().manual_seed(seed)
    proto = torch.randn(d, generator=torch.Generator().manual_seed(7))
    bags = []
    for _ in range(n_bags):
        n = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
        x = torch.randn(n, d, generator=g)
        label = int(torch.rand(1, generator=g) < 0.5)
        if label:
            k = int(torch.randint(1, 3, (1,), generator=g))
            x[:k] += 1.5 * proto
        artefact = torch.rand(n, generator=g) < 0.2
        artefact[0] = False
        x[artefact] += 2.0 * proto  # artefacts look tumour-like but carry no label information
        perm = torch.randperm(n, generator=g)
        bags.append((x[perm], artefact[perm], torch.tensor(float(label))))
    return bags
