import math

import torch.nn as nn
import torch.nn.functional as F


class ConditionerNet(nn.Module):
    """MLP that maps the untouched half of the input to the coupling parameters."""

    def __init__(self, in_features, out_features, hidden_features=64):
        super().__init__()
        self.hidden_features = hidden_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.fc2 = nn.Linear(hidden_features, hidden_features)
        self.out = nn.Linear(hidden_features, out_features)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.relu(self.fc2(h))
        # keep the output layer's input O(1) whatever the width
        h /= math.sqrt(self.hidden_features)
        return self.out(h)
