import torch.nn as nn


class LTVNet(nn.Module):
    """Outputs three logits per customer: P(return) logit, lognormal loc, lognormal scale (pre-softplus)."""

    def __init__(self, n_features, hidden):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(n_features, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
        )
        self.out = nn.Linear(hidden, 3)

    def forward(self, x):
        return self.out(self.body(x))
