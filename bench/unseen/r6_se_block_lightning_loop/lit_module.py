from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class HParams:
    in_channels: int = 2
    channels: int = 16
    n_classes: int = 3
    se_reduction: int = 4
    lr: float = 3e-3
    weight_decay: float = 1e-4
    epochs: int = 5
    batch_size: int = 32


class SEBlock(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        w = torch.sigmoid(self.fc2(F.relu(self.fc1(x.mean(dim=-1)))))
        x *= w.unsqueeze(-1)
        return x


class ConvSE(nn.Module):
    def __init__(self, in_ch, out_ch, reduction):
        super().__init__()
        self.conv = nn.Conv1d(in_ch, out_ch, 5, padding=2)
        self.bn = nn.BatchNorm1d(out_ch)
        self.se = SEBlock(out_ch, reduction)

    def forward(self, x):
        return self.se(F.relu(self.bn(self.conv(x))))


class LitSEClassifier(nn.Module):
    """Written like a LightningModule; the loop lives in loops.py."""

    def __init__(self, hparams: HParams):
        super().__init__()
        self.hparams = hparams
        self.block1 = ConvSE(hparams.in_channels, hparams.channels, hparams.se_reduction)
        self.block2 = ConvSE(hparams.channels, hparams.channels, hparams.se_reduction)
        self.head = nn.Linear(hparams.channels, hparams.n_classes)

    def forward(self, x):
        h = self.block2(F.max_pool1d(self.block1(x), 2))
        return self.head(h.mean(dim=-1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    @torch.no_grad()
    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.hparams.epochs)
        return opt, sched
