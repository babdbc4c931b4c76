import torch
from torch import nn

from .autoencoder import AutoEncoder


class IDEC(nn.Module):
    """Autoencoder + Student's t soft assignment to learnable cluster centres."""

    def __init__(self, cfg):
        super().__init__()
        self.alpha = cfg.alpha
        self.ae = AutoEncoder(cfg.n_features, cfg.hidden, cfg.z_dim)
        self.cluster_layer = nn.Parameter(torch.empty(cfg.n_clusters, cfg.z_dim))
        nn.init.xavier_normal_(self.cluster_layer)

    def forward(self, x):
        x_bar, z = self.ae(x)
        q = 1.0 / (1.0 + torch.sum((z.unsqueeze(1) - self.cluster_layer) ** 2, 2) / self.alpha)
        q = q.pow((self.alpha + 1.0) / 2.0)
        q = (q.t() / torch.sum(q, 1)).t()
        return x_bar, q, z


def target_distribution(q):
    weight = q ** 2 / q.sum(0)
    return (weight.t() / weight.sum(1)).t()
