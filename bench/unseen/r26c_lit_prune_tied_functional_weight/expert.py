"""Gradual magnitude pruning of a weight-tied refinement MLP (Lightning 2.x).

The hidden block is shared across `n_iter` refinement steps (ALBERT-style weight tying); from
epoch 1 on, every Linear is L1-pruned a bit more at the start of each epoch.
"""
import tempfile
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune
import lightning as L
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 20, generator=g)
    proj = torch.randn(20, 4, generator=torch.Generator().manual_seed(123))
    y = (torch.tanh(x @ proj) + 0.3 * (x[:, :4] ** 2)).argmax(1)
    return x, y


class TiedRefiner(L.LightningModule):
    def __init__(self, width=64, n_iter=3, prune_amount=0.25, lr=3e-3):
        super().__init__()
        self.save_hyperparameters()
        self.inp = nn.Linear(20, width)
        self.block = nn.Linear(width, width)  # shared by every refinement step
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 4)
        self._losses = []

    def forward(self, x):
        h = F.gelu(self.inp(x))
        for _ in range(self.hparams.n_iter):
            h = h + F.gelu(self.block(self.norm(h)))
        return self.head(h)

    def on_train_epoch_start(self):
        if self.current_epoch >= 1:
            for m in (self.inp, self.block, self.head):
                prune.l1_unstructured(m, "weight", amount=self.hparams.prune_amount)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self._losses.append(loss.detach())
        return loss

    def on_train_epoch_end(self):
        xv, yv = self.trainer.val_xy
        with torch.no_grad():
            logits = self(xv)
            vloss = F.cross_entropy(logits, yv).item()
            acc = (logits.argmax(1) == yv).float().mean().item()
        zeros = sum((m.weight == 0).sum().item() for m in (self.inp, self.block, self.head))
        total = sum(m.weight.numel() for m in (self.inp, self.block, self.head))
        tr = torch.stack(self._losses).mean().item()
        self._losses.clear()
        print(f"epoch {self.current_epoch} train_loss {tr:.6f} val_loss {vloss:.6f} "
              f"val_acc {acc:.6f} sparsity {zeros / total:.6f}")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main():
    L.seed_everything(0, verbose=False)
    x, y = make_data(1024, seed=1)
    xv, yv = make_data(512, seed=2)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    model = TiedRefiner()
    trainer = L.Trainer(max_epochs=4, accelerator="cpu", logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False,
                        default_root_dir=tempfile.mkdtemp())
    trainer.val_xy = (xv, yv)
    trainer.fit(model, loader)
    with torch.no_grad():
        checksum = sum(p.double().abs().sum().item() for p in model.parameters())
        checksum += sum(m.weight.double().abs().sum().item() for m in (model.inp, model.block, model.head))
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
