import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseLayer(nn.Module):
    """BN-ReLU-Conv1x1-BN-ReLU-Conv3x3 bottleneck (DenseNet-BC)."""

    def __init__(self, in_channels, growth_rate, bn_size):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(in_channels)
        self.conv1 = nn.Conv2d(in_channels, bn_size * growth_rate, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, 3, padding=1, bias=False)

    def forward(self, concat):
        out = self.conv1(F.relu(self.norm1(concat)))
        return self.conv2(F.relu(self.norm2(out)))


class DenseBlock(nn.Module):
    """Dense block that concatenates into one pre-allocated buffer instead of allocating
    a new tensor for every layer (the 'shared memory' trick of the memory-efficient DenseNet)."""

    def __init__(self, num_layers, in_channels, growth_rate, bn_size):
        super().__init__()
        self.layers = nn.ModuleList(
            DenseLayer(in_channels + i * growth_rate, growth_rate, bn_size) for i in range(num_layers)
        )
        self.out_channels = in_channels + num_layers * growth_rate
        self._storage = None

    def _shared_buffer(self, x):
        shape = (x.size(0), self.out_channels, x.size(2), x.size(3))
        if self._storage is None or self._storage.shape != shape:
            self._storage = x.new_empty(shape)
        return self._storage

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            concat = torch.cat(features, 1)
            features.append(layer(concat))
        return torch.cat(features, 1)


class Transition(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.norm = nn.BatchNorm2d(in_channels)
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x):
        return F.avg_pool2d(self.conv(F.relu(self.norm(x))), 2)


class DenseNet(nn.Module):
    def __init__(self, growth_rate, block_config, num_init_features, bn_size, num_classes):
        super().__init__()
        self.stem = nn.Conv2d(3, num_init_features, 3, padding=1, bias=False)
        blocks = []
        ch = num_init_features
        for i, n in enumerate(block_config):
            block = DenseBlock(n, ch, growth_rate, bn_size)
            blocks.append(block)
            ch = block.out_channels
            if i != len(block_config) - 1:
                blocks.append(Transition(ch, ch // 2))
                ch = ch // 2
        self.blocks = nn.Sequential(*blocks)
        self.norm_final = nn.BatchNorm2d(ch)
        self.classifier = nn.Linear(ch, num_classes)

    def forward(self, x):
        features = self.blocks(self.stem(x))
        out = F.relu(self.norm_final(features), inplace=True)
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.classifier(out)
