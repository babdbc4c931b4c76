import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, MixtureSameFamily, MultivariateNormal


class HistoryEncoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.gru = nn.GRU(2, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, hist):
        _, h = self.gru(hist)
        out = self.proj(h[-1])
        return out.relu_()           # relu_ on a fresh Linear output


class FullCovMDNHead(nn.Module):
    """K full-covariance Gaussians: logits, means and Cholesky-style factors."""

    def __init__(self, hidden, K, jitter):
        super().__init__()
        self.K, self.jitter = K, jitter
        self.logits = nn.Linear(hidden, K)
        self.means = nn.Linear(hidden, 2 * K)
        self.factors = nn.Linear(hidden, 4 * K)

    def forward(self, h):
        B = h.shape[0]
        logits = self.logits(h)
        logits -= logits.max(dim=-1, keepdim=True).values.detach()   # shift for stability
        mu = self.means(h).view(B, self.K, 2)
        A = self.factors(h).view(B, self.K, 2, 2)
        cov = A @ A.mT
        cov.diagonal(dim1=-2, dim2=-1).add_(self.jitter)
        # keep the matrix exactly symmetric before the Cholesky in MultivariateNormal
        cov.add_(cov.mT).mul_(0.5)
        return logits, mu, cov


class TrajectoryMDN(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = HistoryEncoder(cfg.hidden)
        self.head = FullCovMDNHead(cfg.hidden, cfg.n_components, cfg.cov_jitter)

    def forward(self, hist):
        logits, mu, cov = self.head(self.encoder(hist))
        return MixtureSameFamily(Categorical(logits=logits), MultivariateNormal(mu, covariance_matrix=cov))
