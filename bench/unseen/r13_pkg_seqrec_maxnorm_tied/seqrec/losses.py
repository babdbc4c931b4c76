import torch
import torch.nn.functional as F


def sample_negatives(targets, n_items, n_neg, generator):
    neg = torch.randint(0, n_items - 1, (targets.shape[0], n_neg), generator=generator)
    return neg + (neg >= targets[:, None]).long()


def bpr_loss(pos_scores, neg_scores):
    return -F.logsigmoid(pos_scores - neg_scores).mean()


def recall_at_k(scores, targets, k=10):
    topk = scores.topk(k, dim=-1).indices
    return (topk == targets[:, None]).any(-1).float().mean().item()
