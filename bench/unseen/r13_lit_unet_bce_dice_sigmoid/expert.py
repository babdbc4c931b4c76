"""Binary segmentation of synthetic blobs with a tiny U-Net in PyTorch Lightning."""
from pathlib import Path

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset

HERE = Path(__file__).resolve().parent


def make_blobs(n, size, seed):
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    masks = torch.zeros(n, 1, size, size)
    for k in range(3):
        cy = torch.rand(n, generator=g) * size
        cx = torch.rand(n, generator=g) * size
        r = 2.0 + torch.rand(n, generator=g) * 4.0
        d2 = (yy[None] - cy[:, None, None]) ** 2 + (xx[None] - cx[:, None, None]) ** 2
        masks[:, 0] = torch.maximum(masks[:, 0], (d2 < r[:, None, None] ** 2).float())
    images = masks * 0.8 + 0.6 * torch.randn(n, 1, size, size, generator=g)
    return images, masks


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class TinyUNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.enc1 = conv_block(1, c)
        self.enc2 = conv_block(c, 2 * c)
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec = conv_block(2 * c, c)
        self.head = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        d = self.dec(torch.cat([self.up(e2), e1], dim=1))
        return self.head(d)


class BCEDiceLoss(nn.Module):
    def __init__(self, dice_weight=1.0, smooth=1.0):
        super().__init__()
        self.dice_weight = dice_weight
        self.smooth = smooth

    def forward(self, logits, target):
        bce = F.binary_cross_entropy_with_logits(logits, target)
        probs = torch.sigmoid(logits)
        inter = (probs * target).sum(dim=(1, 2, 3))
        union = probs.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
        dice = 1.0 - (2.0 * inter + self.smooth) / (union + self.smooth)
        return bce + self.dice_weight * dice.mean()


class SegModule(L.LightningModule):
    def __init__(self, base_channels=8, lr=1e-2, dice_weight=1.0, smooth=1.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = TinyUNet(base_channels)
        self.criterion = BCEDiceLoss(dice_weight, smooth)
        self.epoch_losses = []
        self._running = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.criterion(self(x), y)
        self._running.append(loss.detach())
        return loss

    def on_train_epoch_end(self):
        self.epoch_losses.append(torch.stack(self._running).mean().item())
        self._running.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


@torch.no_grad()
def dice_score(model, x, y):
    model.eval()
    pred = (torch.sigmoid(model(x)) > 0.5).float()
    inter = (pred * y).sum()
    return (2 * inter / (pred.sum() + y.sum())).item()


def main():
    cfg = yaml.safe_load((HERE / "config.yaml").read_text())
    L.seed_everything(cfg["seed"], verbose=False)
    dc = cfg["data"]
    x_tr, y_tr = make_blobs(dc["n_train"], dc["size"], cfg["seed"])
    x_va, y_va = make_blobs(dc["n_val"], dc["size"], cfg["seed"] + 1)
    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=dc["batch_size"], shuffle=True,
                        generator=torch.Generator().manual_seed(cfg["seed"]))

    module = SegModule(**cfg["model"])
    trainer = L.Trainer(max_epochs=cfg["trainer"]["max_epochs"], accelerator="cpu", devices=1,
                        enable_progress_bar=False, logger=False, enable_checkpointing=False,
                        enable_model_summary=False, deterministic=True)
    trainer.fit(module, loader)

    for i, l in enumerate(module.epoch_losses, 1):
        print(f"epoch {i}  train loss {l:.4f}")
    print(f"val dice {dice_score(module, x_va, y_va):.4f}")
    print(f"param checksum {sum(p.double().abs().sum().item() for p in module.parameters()):.4f}")


if __name__ == "__main__":
    main()
