"""Softmax + center loss (Wen et al. 2016) in a LightningModule; centers kept as a buffer and
updated with the paper's rule (Eq. 4) inside training_step."""
import warnings

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")


class CenterLossNet(L.LightningModule):
    def __init__(self, n_classes=4, feat_dim=2, lam=0.1, alpha=0.5, lr=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.backbone = nn.Sequential(nn.Linear(8, 32), nn.PReLU(), nn.Linear(32, feat_dim))
        self.head = nn.Linear(feat_dim, n_classes)
        self.register_buffer("centers", torch.zeros(n_classes, feat_dim))
        self.history = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        feats = self.backbone(x)
        ce = F.cross_entropy(self.head(feats), y)
        c = self.centers[y]
        center = 0.5 * (feats - c).pow(2).sum(1).mean()
        loss = ce + self.hparams.lam * center

        # center update, Eq. (4): c_j <- c_j - alpha * sum_i (c_j - x_i) / (1 + n_j)
        diff = c - feats
        delta = torch.zeros_like(self.centers).index_add_(0, y, diff)
        counts = torch.bincount(y, minlength=self.hparams.n_classes).float().unsqueeze(1)
        self.centers.sub_(self.hparams.alpha * delta / (1 + counts))

        self.history.append((ce.item(), center.item()))
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


def main():
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    y = torch.randint(0, 4, (128,), generator=g)
    means = torch.randn(4, 8, generator=g) * 1.5
    x = means[y] + torch.randn(128, 8, generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=False)
    model = CenterLossNet()
    trainer = L.Trainer(accelerator="cpu", max_epochs=3, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, loader)
    for i in (0, 4, 8, len(model.history) - 1):
        ce, cl = model.history[i]
        print(f"step {i} ce {ce:.6f} center {cl:.6f}")
    total = sum(p.sum() for p in model.parameters()).item()
    print(f"centers {model.centers.sum().item():.6f}")
    print(f"checksum {total:.6f}")


if __name__ == "__main__":
    main()
