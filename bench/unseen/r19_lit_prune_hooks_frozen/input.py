"""Sparse fine-tuning with PyTorch Lightning.

A magnitude-pruned network is fine-tuned on a new task with its feature extractor frozen. A callback
keeps pruned connections at zero by masking their gradients (the "gradient mask" hooks of sparse
fine-tuning recipes).
"""
import argparse

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_images(n, gen):
    """4 classes of 1x10x10 images: a bright quadrant per class plus noise."""
    y = torch.randint(0, 4, (n,), generator=gen)
    x = 0.8 * torch.randn(n, 1, 10, 10, generator=gen)
    for c in range(4):
        r, s = divmod(c, 2)
        x[y == c, :, r * 5:(r + 1) * 5, s * 5:(s + 1) * 5] += 1.0
    return x, y


def prune_by_magnitude(model, sparsity):
    """One-shot global-per-layer magnitude pruning of conv/linear weights (done before fine-tuning)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                k = int(sparsity * m.weight.numel())
                thresh = m.weight.abs().flatten().kthvalue(k).values
                m.weight.mul_((m.weight.abs() > thresh).float())


class SparseClassifier(L.LightningModule):
    def __init__(self, lr=0.01, freeze_backbone=True):
        super().__init__()
        self.save_hyperparameters()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),
        )
        self.head = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
        if freeze_backbone:
            self.backbone.requires_grad_(False)
        self.epoch_losses = []

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.epoch_losses.append(loss.detach())
        return loss

    def configure_optimizers(self):
        params = [p for p in self.parameters() if p.requires_grad]
        return torch.optim.SGD(params, lr=self.hparams.lr, momentum=0.9)


class GradientMaskCallback(L.Callback):
    """Keeps pruned weights at exactly zero: their gradients are masked out."""

    def __init__(self):
        self.handles = []

    def on_fit_start(self, trainer, pl_module):
        for name, m in pl_module.named_modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                mask = (m.weight != 0).float()
                self.handles.append(m.weight.register_hook(lambda g, mask=mask: g * mask))

    def on_fit_end(self, trainer, pl_module):
        for h in self.handles:
            h.remove()


class PrintMetrics(L.Callback):
    def __init__(self, x_val, y_val):
        self.x_val, self.y_val = x_val, y_val

    def on_train_epoch_end(self, trainer, pl_module):
        loss = torch.stack(pl_module.epoch_losses).mean().item()
        pl_module.epoch_losses.clear()
        with torch.no_grad():
            acc = (pl_module(self.x_val).argmax(1) == self.y_val).float().mean().item()
        zeros = sum((m.weight == 0).sum().item() for m in pl_module.head if isinstance(m, nn.Linear))
        print(f"epoch {trainer.current_epoch}  train_loss {loss:.5f}  val_acc {acc:.5f}  "
              f"head_zeros {zeros}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--sparsity", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.1)
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    x_tr, y_tr = make_images(512, gen)
    x_va, y_va = make_images(128, gen)

    model = SparseClassifier(lr=args.lr, freeze_backbone=True)
    prune_by_magnitude(model, args.sparsity)

    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(1))
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False,
                        callbacks=[GradientMaskCallback(), PrintMetrics(x_va, y_va)])
    trainer.fit(model, loader)

    bb = torch.sqrt(sum(p.pow(2).sum() for p in model.backbone.parameters())).item()
    hd = torch.sqrt(sum(p.detach().pow(2).sum() for p in model.head.parameters())).item()
    print(f"final  backbone_norm {bb:.5f}  head_norm {hd:.5f}")


if __name__ == "__main__":
    main()
