"""Gated tabular classifier in Lightning.  Lots of in-place ops that look
dangerous (relu_, +=, slice -=, running buffer, EMA copy, renorm_) but none of
them touches a tensor autograd still needs."""
import copy

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_data(n, gen, d=12, k=3):
    w = torch.randn(d, k, generator=torch.Generator().manual_seed(5))
    x = torch.randn(n, d, generator=gen)
    y = (x @ w + 0.7 * torch.randn(n, k, generator=gen)).argmax(1)
    return x, y


class GatedNet(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, 2 * d_hidden)
        self.skip = nn.Linear(d_in, 2 * d_hidden)
        self.head = nn.Linear(d_hidden, n_classes)
        self.register_buffer("feat_mean", torch.zeros(d_hidden))

    def forward(self, x, margin=0.0, y=None):
        h = self.fc1(x)
        h.relu_()                       # ReLU saves its output; nothing modifies h later
        out = self.fc2(h)
        out += self.skip(x)             # addmm does not save its output
        a, b = out.chunk(2, dim=1)      # views are only read, never written
        feat = a * torch.sigmoid(b)
        centred = feat - self.feat_mean  # subtraction does not save the buffer
        if self.training:
            with torch.no_grad():       # running statistic carried across steps
                self.feat_mean.mul_(0.9).add_(0.1 * feat.mean(0))
        logits = self.head(centred)
        if y is not None and margin > 0:
            logits[torch.arange(len(y)), y] -= margin   # additive-margin softmax
        return logits


class LitGated(L.LightningModule):
    def __init__(self, val, margin=0.2, max_norm=2.0):
        super().__init__()
        self.net = GatedNet(12, 24, 3)
        self.ema = copy.deepcopy(self.net).requires_grad_(False)
        self.val = val
        self.margin, self.max_norm = margin, max_norm
        self.losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x, self.margin, y), y)
        self.losses.append(loss.item())
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        with torch.no_grad():
            self.net.head.weight.renorm_(2, 0, self.max_norm)   # max-norm constraint
            for p_ema, p in zip(self.ema.parameters(), self.net.parameters()):
                p_ema.lerp_(p, 0.1)
            self.ema.feat_mean.copy_(self.net.feat_mean)

    def on_train_epoch_end(self):
        x, y = self.val
        self.net.eval()
        self.ema.eval()
        with torch.no_grad():
            acc = (self.net(x).argmax(1) == y).float().mean().item()
            acc_ema = (self.ema(x).argmax(1) == y).float().mean().item()
        self.net.train()
        print(f"epoch {self.current_epoch} loss {sum(self.losses) / len(self.losses):.5f} "
              f"val_acc {acc:.5f} ema_acc {acc_ema:.5f}")
        self.losses.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.net.parameters(), lr=5e-3)


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    x, y = make_data(384, gen)
    val = make_data(256, gen)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(1))
    trainer = L.Trainer(accelerator="cpu", max_epochs=3, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(LitGated(val), loader)


if __name__ == "__main__":
    main()
