import torch.nn.functional as F


def masked_prediction_loss(logits, targets, mask, unmasked_weight=0.0):
    """HuBERT objective: predict the unit of every masked frame (optionally unmasked ones too)."""
    loss_m = F.cross_entropy(logits[mask], targets[mask])
    if unmasked_weight > 0:
        loss_u = F.cross_entropy(logits[~mask], targets[~mask])
        return loss_m + unmasked_weight * loss_u
    return loss_m
