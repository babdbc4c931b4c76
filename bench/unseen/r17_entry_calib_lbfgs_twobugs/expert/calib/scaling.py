import torch
import torch.nn as nn


class VectorScaling(nn.Module):
    """Post-hoc calibration: per-class scale and shift of frozen logits
    (Guo et al. 2017, 'vector scaling')."""

    def __init__(self, n_classes):
        super().__init__()
        self.w = nn.Parameter(torch.ones(n_classes))
        self.b = nn.Parameter(torch.zeros(n_classes))

    def forward(self, logits):
        return logits * self.w + self.b


def project_positive_(head, min_scale=0.05):
    """Keep every per-class scale positive so the class ranking of a single
    logit is never flipped."""
    with torch.no_grad():
        head.w.clamp_(min=min_scale)
