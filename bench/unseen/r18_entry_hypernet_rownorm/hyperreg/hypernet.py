import torch
import torch.nn as nn
from torch.func import functional_call

from .utils import num_params, param_shapes, unflatten_params


class TargetMLP(nn.Module):
    """The network whose weights are generated; its own parameters are never trained."""

    def __init__(self, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(1, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.gain = nn.Parameter(torch.ones(hidden))
        self.fc3 = nn.Linear(hidden, 1)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        h = torch.tanh(self.fc2(h) * self.gain)
        return self.fc3(h)


class HyperNetwork(nn.Module):
    """Task embedding -> all parameters of the target MLP (von Oswald et al., 2020)."""

    def __init__(self, n_tasks, emb_dim=8, hidden=64, target_hidden=32):
        super().__init__()
        self.target = TargetMLP(target_hidden).requires_grad_(False)
        self.shapes = param_shapes(self.target)
        self.task_emb = nn.Embedding(n_tasks, emb_dim)
        nn.init.normal_(self.task_emb.weight, std=1.0)
        self.body = nn.Sequential(nn.Linear(emb_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, num_params(self.shapes))
        nn.init.normal_(self.head.weight, std=0.02)
        with torch.no_grad():
            init = torch.cat([p.flatten() for p in self.target.parameters()])
            self.head.bias.copy_(init)

    def generate(self, task_ids):
        return unflatten_params(self.head(self.body(self.task_emb(task_ids))), self.shapes)

    def forward(self, task_ids, xs):
        params = self.generate(task_ids)
        return torch.stack([functional_call(self.target, p, (x,)) for p, x in zip(params, xs)])
