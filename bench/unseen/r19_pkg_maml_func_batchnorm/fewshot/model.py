import torch.nn as nn


def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
        nn.MaxPool2d(2),
    )


class ConvLearner(nn.Module):
    def __init__(self, n_way, channels, image_size):
        super().__init__()
        self.features = nn.Sequential(conv_block(1, channels), conv_block(channels, channels))
        self.head = nn.Linear(channels * (image_size // 4) ** 2, n_way)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))
