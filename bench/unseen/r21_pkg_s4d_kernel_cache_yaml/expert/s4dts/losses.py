import torch.nn.functional as F


def classification_loss(logits, y, label_smoothing=0.0):
    return F.cross_entropy(logits, y, label_smoothing=label_smoothing)
