import torch.nn as nn

from .activations import Mish


class ConvBNAct(nn.Sequential):
    def __init__(self, cin, cout, stride=1):
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), Mish())


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = ConvBNAct(cin, cout, stride)
        self.conv2 = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.short = (nn.Identity() if stride == 1 and cin == cout else
                      nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)))
        self.act = Mish()

    def forward(self, x):
        return self.act(self.conv2(self.conv1(x)) + self.short(x))


class SmallResNet(nn.Module):
    def __init__(self, width=8, feat_dim=32):
        super().__init__()
        self.stem = ConvBNAct(1, width)
        self.stages = nn.Sequential(BasicBlock(width, width, 1), BasicBlock(width, 2 * width, 2))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.proj = nn.Linear(2 * width, feat_dim)

    def forward(self, x):
        return self.proj(self.pool(self.stages(self.stem(x))).flatten(1))
