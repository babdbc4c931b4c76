import copy

import torch
import torch.nn.functional as F
import lightning.pytorch as pl

from blocks import SignalNet


class LitSignal(pl.LightningModule):
    def __init__(self, lr=3e-3, ema_decay=0.9):
        super().__init__()
        self.save_hyperparameters()
        self.net = SignalNet()
        self.ema = copy.deepcopy(self.net).requires_grad_(False)
        self.register_buffer("loss_avg", torch.zeros(()))
        self.val_history, self._val = [], []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        with torch.no_grad():
            self.loss_avg.mul_(0.9).add_(0.1 * loss.detach())
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        d = self.hparams.ema_decay
        with torch.no_grad():
            for pe, p in zip(self.ema.parameters(), self.net.parameters()):
                pe.mul_(d).add_(p, alpha=1 - d)
            for be, b in zip(self.ema.buffers(), self.net.buffers()):
                be.copy_(b)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.ema(x)
        self._val.append((F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()))

    def on_validation_epoch_end(self):
        if not self.trainer.sanity_checking:
            self.val_history.append((self._val[0][0], self._val[0][1], self.loss_avg.item()))
        self._val = []

    def configure_optimizers(self):
        return torch.optim.Adam(self.net.parameters(), lr=self.hparams.lr)
