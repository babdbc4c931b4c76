import torch
import torch.nn.functional as F


def corrupt_tails(pos, num_entities, num_negatives, gen):
    neg = pos.repeat_interleave(num_negatives, dim=0)
    neg[:, 2] = torch.randint(0, num_entities, (neg.shape[0],), generator=gen)
    return neg


def bce_loss(pos_scores, neg_scores):
    """sLCWA binary cross-entropy: positives labelled 1, corrupted triples 0."""
    scores = torch.cat([pos_scores, neg_scores])
    labels = torch.cat([torch.ones_like(pos_scores), torch.zeros_like(neg_scores)])
    return F.binary_cross_entropy_with_logits(scores, labels)


def rank_metrics(scores, true_tails):
    true = scores.gather(1, true_tails.unsqueeze(1))
    ranks = (scores > true).sum(1).float() + 1.0
    return {"mrr": (1.0 / ranks).mean().item(), "hits@3": (ranks <= 3).float().mean().item()}
