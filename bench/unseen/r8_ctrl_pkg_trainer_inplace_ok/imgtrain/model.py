import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity                       # torchvision-style residual
        return self.relu(out)


class SmallResNet(nn.Module):
    def __init__(self, ch=12, n_classes=3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU(inplace=True))
        self.block1 = BasicBlock(ch)
        self.block2 = BasicBlock(ch)
        self.fc1 = nn.Linear(ch, 32)
        self.fc2 = nn.Linear(32, n_classes)

    def forward(self, x):
        h = self.block2(F.max_pool2d(self.block1(self.stem(x)), 2))
        h = self.fc1(h.mean((2, 3)))
        h.relu_()                              # the linear layer did not save its output
        return self.fc2(h)
