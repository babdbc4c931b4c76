import torch
import torch.nn as nn


class CosineClassifier(nn.Module):
    """Cosine-similarity classifier with a fixed scale (as in few-shot / face-recognition heads)."""

    def __init__(self, feat_dim, n_classes, scale=10.0, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_classes, feat_dim) * 0.1)
        self.scale = scale
        self.eps = eps

    def forward(self, feat):
        feat /= feat.norm(dim=1, keepdim=True) + self.eps
        w = self.weight / (self.weight.norm(dim=1, keepdim=True) + self.eps)
        return self.scale * feat @ w.t()
