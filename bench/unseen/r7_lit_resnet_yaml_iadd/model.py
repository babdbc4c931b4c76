import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, in_ch, out_ch, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.relu = nn.ReLU()
        self.shortcut = nn.Identity()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), nn.BatchNorm2d(out_ch)
            )

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += self.shortcut(x)
        return out


class SmallResNet(nn.Module):
    def __init__(self, channels=(8, 16), num_classes=4):
        super().__init__()
        c0, c1 = channels
        self.stem = nn.Sequential(nn.Conv2d(1, c0, 3, padding=1, bias=False), nn.BatchNorm2d(c0), nn.ReLU())
        self.layer1 = BasicBlock(c0, c0)
        self.layer2 = BasicBlock(c0, c1, stride=2)
        self.fc = nn.Linear(c1, num_classes)

    def forward(self, x):
        h = self.layer2(self.layer1(self.stem(x)))
        return self.fc(F.adaptive_avg_pool2d(h, 1).flatten(1))
