import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CenterNet(nn.Module):
    def __init__(self, num_classes, width, prior_prob):
        super().__init__()
        self.stem = nn.Conv2d(1, width, 3, padding=1)
        self.down = nn.Conv2d(width, width, 3, stride=2, padding=1)
        self.tower = nn.Conv2d(width, width, 3, padding=1)
        self.cls_logits = nn.Conv2d(width, num_classes, 3, padding=1)
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        nn.init.constant_(self.cls_logits.bias, -math.log((1 - prior_prob) / prior_prob))

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = F.relu(self.down(x))
        x = F.relu(self.tower(x))
        return self.cls_logits(x)
