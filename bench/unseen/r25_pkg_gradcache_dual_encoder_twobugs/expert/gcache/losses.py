"""In-batch-negative contrastive loss on cosine similarities."""
import torch
import torch.nn.functional as F


def info_nce(q, d, temperature):
    """Symmetric InfoNCE; row i of ``q`` is the positive of row i of ``d``."""
    q = q / q.norm(dim=-1, keepdim=True)
    d = d / d.norm(dim=-1, keepdim=True)
    logits = q @ d.t() / temperature
    labels = torch.arange(len(q))
    return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels))
