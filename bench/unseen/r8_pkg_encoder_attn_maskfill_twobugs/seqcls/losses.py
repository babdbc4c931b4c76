import torch.nn.functional as F


def smoothed_ce(logits, labels, smoothing):
    return F.cross_entropy(logits, labels, label_smoothing=smoothing)
