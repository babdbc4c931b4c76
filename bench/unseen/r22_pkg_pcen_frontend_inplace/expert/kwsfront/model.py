import torch.nn as nn

from .frontend import Frontend


class KWSNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.frontend = Frontend(cfg)
        self.encoder = nn.Sequential(nn.Conv1d(cfg["n_filters"], 16, 3, padding=1), nn.ReLU(),
                                     nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.head = nn.Linear(16, cfg["n_classes"])

    def forward(self, wav):
        return self.head(self.encoder(self.frontend(wav)))
