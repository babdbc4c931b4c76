import torch
import torch.nn as nn


class CholeskySPD(nn.Module):
    """Maps an unconstrained square matrix X to L @ L.T + eps*I with L = tril(X)."""

    def __init__(self, eps=1e-3):
        super().__init__()
        self.eps = eps

    def forward(self, X):
        L = X.tril()
        return L @ L.T + self.eps * torch.eye(X.size(0), dtype=X.dtype)
