import torch
import torch.nn.functional as F
import lightning.pytorch as pl

from .model import AttnPoolClassifier


class LitTextClassifier(pl.LightningModule):
    def __init__(self, vocab=40, dim=32, n_classes=2, lr=5e-3):
        super().__init__()
        self.save_hyperparameters()
        self.model = AttnPoolClassifier(vocab, dim, n_classes)
        self.val_history, self._val = [], []

    def forward(self, x, lengths):
        return self.model(x, lengths)

    def training_step(self, batch, batch_idx):
        x, lengths, y = batch
        return F.cross_entropy(self(x, lengths), y)

    def validation_step(self, batch, batch_idx):
        x, lengths, y = batch
        logits = self(x, lengths)
        self._val.append((F.cross_entropy(logits, y, reduction="sum").item(),
                          (logits.argmax(1) == y).sum().item(), len(y)))

    def on_validation_epoch_end(self):
        if not self.trainer.sanity_checking:
            n = sum(v[2] for v in self._val)
            self.val_history.append((sum(v[0] for v in self._val) / n, sum(v[1] for v in self._val) / n))
        self._val = []

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
