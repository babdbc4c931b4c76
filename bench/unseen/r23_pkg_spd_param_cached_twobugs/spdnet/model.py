import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P

from .parametrizations import CholeskySPD


class MetricProtoNet(nn.Module):
    def __init__(self, in_dim, emb_dim, n_classes, eps):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, 16), nn.Tanh(), nn.Linear(16, emb_dim))
        self.prototypes = nn.Parameter(torch.randn(n_classes, emb_dim))
        self.metric = nn.Linear(emb_dim, emb_dim, bias=False)
        P.register_parametrization(self.metric, "weight", CholeskySPD(eps))

    def forward(self, x):
        z = self.encoder(x)
        M = self.metric.weight
        diff = z[:, None, :] - self.prototypes[None]
        dist = ((diff @ M) * diff).sum(-1)
        return -dist

    def trace_penalty(self):
        return self.metric.weight.diagonal().sum()
