# 1-D residual network for multi-label classification of short signals.
import torch.nn as nn
import torch.nn.functional as F


class ResBlock1d(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv1d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm1d(ch)
        self.conv2 = nn.Conv1d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm1d(ch)

    def forward(self, x):
        identity = x
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out += identity
        return out


class SignalNet(nn.Module):
    def __init__(self, in_ch=2, ch=16, n_labels=5, blocks=2):
        super().__init__()
        self.stem = nn.Conv1d(in_ch, ch, 5, padding=2)
        self.blocks = nn.Sequential(*[ResBlock1d(ch) for _ in range(blocks)])
        self.head = nn.Linear(ch, n_labels)

    def forward(self, x):
        h = self.blocks(F.relu(self.stem(x)))
        return self.head(h.mean(-1))
