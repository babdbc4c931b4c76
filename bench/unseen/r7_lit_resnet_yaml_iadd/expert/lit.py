import torch
import torch.nn.functional as F
import lightning.pytorch as pl

from model import SmallResNet


class LitBars(pl.LightningModule):
    def __init__(self, channels, num_classes, lr, weight_decay):
        super().__init__()
        self.save_hyperparameters()
        self.net = SmallResNet(tuple(channels), num_classes)
        self.val_history = []
        self._val = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self._val.append((F.cross_entropy(logits, y, reduction="sum").item(),
                          (logits.argmax(1) == y).sum().item(), len(y)))

    def on_validation_epoch_end(self):
        if not self.trainer.sanity_checking:
            n = sum(v[2] for v in self._val)
            self.val_history.append((sum(v[0] for v in self._val) / n, sum(v[1] for v in self._val) / n))
        self._val = []

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)
