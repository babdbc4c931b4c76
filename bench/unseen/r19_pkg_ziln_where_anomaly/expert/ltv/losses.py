import math

import torch
import torch.nn.functional as F


def zero_inflated_lognormal_pred(logits):
    """Expected value E[y] = p * exp(loc + scale^2 / 2)."""
    p = torch.sigmoid(logits[..., 0])
    loc = logits[..., 1]
    scale = F.softplus(logits[..., 2]) + 1e-3
    return p * torch.exp(loc + 0.5 * scale ** 2)


def zero_inflated_lognormal_loss(labels, logits):
    """ZILN loss (Wang, Liu & Miao, 2019): BCE on returning + lognormal NLL on the positive labels."""
    positive = labels > 0
    p_logit, loc, scale_raw = logits.unbind(-1)
    scale = F.softplus(scale_raw) + 1e-3

    classification_loss = F.binary_cross_entropy_with_logits(p_logit, positive.float())

    safe_labels = torch.where(positive, labels, torch.ones_like(labels))
    log_y = torch.log(safe_labels)
    log_prob = (-log_y - torch.log(scale) - 0.5 * math.log(2 * math.pi)
                - (log_y - loc) ** 2 / (2 * scale ** 2))
    regression_loss = -torch.where(positive, log_prob, torch.zeros_like(log_prob)).mean()
    return classification_loss + regression_loss
