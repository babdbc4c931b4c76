import torch.nn as nn
import torch.nn.functional as F


class SigmoidFocalLoss(nn.Module):
    """Focal loss of Lin et al. (RetinaNet), normalised by the number of positive locations."""

    def __init__(self, alpha=0.25, gamma=2.0):
        super().__init__()
        self.alpha, self.gamma = alpha, gamma

    def forward(self, logits, targets):
        p = logits.sigmoid()
        pt = p * targets + (1 - p) * (1 - targets)
        w = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        w = w * (1 - pt).pow(self.gamma)
        num_pos = targets.sum().clamp(min=1.0)
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
        return (w * ce).sum() / num_pos
