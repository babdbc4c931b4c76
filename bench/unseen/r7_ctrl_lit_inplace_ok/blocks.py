import torch
import torch.nn as nn
import torch.nn.functional as F


class ResBlock1d(nn.Module):
    """torchvision-style BasicBlock: in-place ReLUs after BatchNorm, in-place residual add
    before the last ReLU."""

    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv1d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm1d(ch)
        self.conv2 = nn.Conv1d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm1d(ch)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class SignalNet(nn.Module):
    def __init__(self, in_ch=1, ch=16, n_classes=3, length=64):
        super().__init__()
        self.stem = nn.Conv1d(in_ch, ch, 5, padding=2)
        self.pos_bias = nn.Parameter(torch.zeros(1, ch, length))
        self.bn = nn.BatchNorm1d(ch)
        self.blocks = nn.Sequential(ResBlock1d(ch), ResBlock1d(ch))
        self.head = nn.Linear(ch, n_classes)
        self.register_buffer("temperature", torch.tensor(1.5))

    def forward(self, x):
        h = self.stem(x)
        h += self.pos_bias                 # conv output is not saved by the conv's backward
        h = F.relu(self.bn(h), inplace=True)
        h = self.blocks(h)
        logits = self.head(h.mean(-1))
        logits.div_(self.temperature)      # Linear does not save its output
        return logits
