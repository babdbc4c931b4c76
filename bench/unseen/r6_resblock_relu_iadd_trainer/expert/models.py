import torch.nn as nn
import torch.nn.functional as F


class ResBlock1d(nn.Module):
    def __init__(self, in_ch, out_ch, stride=1):
        super().__init__()
        self.conv1 = nn.Conv1d(in_ch, out_ch, 5, stride=stride, padding=2, bias=False)
        self.bn1 = nn.BatchNorm1d(out_ch)
        self.conv2 = nn.Conv1d(out_ch, out_ch, 5, padding=2, bias=False)
        self.bn2 = nn.BatchNorm1d(out_ch)
        self.shortcut = None
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(nn.Conv1d(in_ch, out_ch, 1, stride=stride, bias=False),
                                          nn.BatchNorm1d(out_ch))

    def forward(self, x):
        identity = x if self.shortcut is None else self.shortcut(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = out + identity
        return out


class ResNet1d(nn.Module):
    def __init__(self, in_ch, n_classes, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(in_ch, width, 7, padding=3, bias=False),
                                  nn.BatchNorm1d(width), nn.ReLU(inplace=True))
        self.layer1 = ResBlock1d(width, width)
        self.layer2 = ResBlock1d(width, 2 * width, stride=2)
        self.head = nn.Linear(2 * width, n_classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.head(x.mean(dim=-1))
