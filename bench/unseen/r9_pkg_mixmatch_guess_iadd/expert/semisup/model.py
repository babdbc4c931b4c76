import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, in_dim, hidden, n_classes=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, n_classes))

    def forward(self, x):
        return self.net(x)
