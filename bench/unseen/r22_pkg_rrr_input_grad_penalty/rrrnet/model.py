import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, d, hidden, n_classes=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, hidden), nn.Softplus(), nn.Linear(hidden, hidden),
                                 nn.Softplus(), nn.Linear(hidden, n_classes))

    def forward(self, x):
        return self.net(x)
