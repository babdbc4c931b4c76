"""Tiny POS-style sequence tagger trained with PyTorch Lightning 2.x.

Padding positions carry the label -100 (ignored by the loss).  A small custom
torchmetrics metric reports token accuracy on the non-padded positions.
"""
import warnings

warnings.filterwarnings("ignore")

import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L
from torchmetrics import Metric

VOCAB, NTAGS, PAD_TAG = 40, 6, -100


class MaskedTokenAccuracy(Metric):
    """Token accuracy that skips positions whose label is ``ignore_index``."""

    full_state_update = False

    def __init__(self, ignore_index=-100):
        super().__init__()
        self.ignore_index = ignore_index
        self.add_state("correct", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, logits, target):
        valid = target != self.ignore_index
        # map the ignore label to a real class id so that comparisons are well defined
        target[~valid] = 0
        pred = logits.argmax(dim=-1)
        self.correct += ((pred == target) & valid).sum()
        self.total += valid.sum()

    def compute(self):
        return self.correct.float() / self.total.clamp(min=1)


def make_data(n=96, T=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, VOCAB, (n, T), generator=g)
    # tag depends on the token and on the previous token (so context matters)
    prev = torch.cat([torch.zeros(n, 1, dtype=torch.long), tokens[:, :-1]], dim=1)
    tags = (tokens * 3 + prev) % NTAGS
    lengths = torch.randint(6, T + 1, (n,), generator=g)
    pad = torch.arange(T)[None, :] >= lengths[:, None]
    tokens[pad] = 0
    tags[pad] = PAD_TAG
    return tokens, tags


class Tagger(L.LightningModule):
    def __init__(self, d=24, lr=3e-2):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d, padding_idx=0)
        self.conv = nn.Conv1d(d, d, kernel_size=3, padding=1)
        self.head = nn.Linear(d, NTAGS)
        self.lr = lr
        self.train_acc = MaskedTokenAccuracy(ignore_index=PAD_TAG)
        self.epoch_losses = []
        self._running = []

    def forward(self, tokens):
        h = self.emb(tokens)                                   # B,T,d
        h = h + torch.tanh(self.conv(h.transpose(1, 2))).transpose(1, 2)
        return self.head(h)                                    # B,T,C

    def training_step(self, batch, batch_idx):
        tokens, tags = batch
        logits = self(tokens)
        loss = F.cross_entropy(logits.reshape(-1, NTAGS), tags.reshape(-1), ignore_index=PAD_TAG)
        self.train_acc.update(logits.detach(), tags)
        self.log("train_acc", self.train_acc, on_step=False, on_epoch=True)
        self._running.append(loss.detach())
        return loss

    def on_train_epoch_end(self):
        self.epoch_losses.append(torch.stack(self._running).mean().item())
        self._running = []

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def main():
    L.seed_everything(0, verbose=False)
    tokens, tags = make_data()
    ds = torch.utils.data.TensorDataset(tokens, tags)
    loader = torch.utils.data.DataLoader(ds, batch_size=16, shuffle=True,
                                         generator=torch.Generator().manual_seed(1))
    model = Tagger()
    trainer = L.Trainer(max_epochs=4, accelerator="cpu", logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(model, loader)
    print("epoch losses:", " ".join(f"{v:.6f}" for v in model.epoch_losses))
    print(f"final train_acc: {trainer.callback_metrics['train_acc'].item():.6f}")
    checksum = sum(p.detach().double().sum().item() for p in model.parameters())
    print(f"param checksum: {checksum:.6f}")


if __name__ == "__main__":
    main()
