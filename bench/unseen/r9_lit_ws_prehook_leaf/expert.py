"""Small GroupNorm + Weight Standardization CNN (BiT-style) trained with Lightning.

Weight Standardization is attached to every conv through a forward pre-hook so the
backbone definition stays a plain nn.Sequential.
"""
import argparse
import warnings

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrize
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")


class _StandardizeWeight(nn.Module):
    # WS (Qiao et al. 2019): zero-mean, unit-variance filters, recomputed on every forward
    def forward(self, w):
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        var = w.var(dim=(1, 2, 3), keepdim=True, unbiased=False)
        return (w - mean) / torch.sqrt(var + 1e-5)


def apply_weight_standardization(model):
    n = 0
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            parametrize.register_parametrization(m, "weight", _StandardizeWeight())
            n += 1
    return n


def conv_gn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.GroupNorm(4, cout), nn.ReLU())


class WSNet(L.LightningModule):
    def __init__(self, width=16, n_classes=5, lr=0.05, momentum=0.9):
        super().__init__()
        self.save_hyperparameters()
        self.features = nn.Sequential(conv_gn(3, width), conv_gn(width, width, 2),
                                      conv_gn(width, 2 * width, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(2 * width, n_classes)
        self.n_ws = apply_weight_standardization(self.features)
        self.history = []

    def forward(self, x):
        return self.fc(self.features(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.history.append(loss.item())
        return loss

    def on_train_epoch_end(self):
        h = self.history[-8:]
        print(f"epoch {self.current_epoch} mean_loss {sum(h) / len(h):.5f} last_loss {h[-1]:.5f}")

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=self.hparams.momentum)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_epochs)
        return [opt], [sched]


def synthetic_images(n, n_classes, seed):
    protos = torch.randn(n_classes, 3, 12, 12, generator=torch.Generator().manual_seed(1234))
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, n_classes, (n,), generator=g)
    x = protos[y] + 1.5 * torch.randn(n, 3, 12, 12, generator=g)
    return TensorDataset(x, y)


@torch.no_grad()
def evaluate(model, ds):
    model.eval()
    x, y = ds.tensors
    logits = model(x)
    return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()

    L.seed_everything(args.seed, verbose=False)
    torch.set_num_threads(1)
    train_ds = synthetic_images(256, 5, args.seed)
    val_ds = synthetic_images(128, 5, args.seed + 1)
    loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    model = WSNet(width=args.width)
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(model, loader)
    loss, acc = evaluate(model, val_ds)
    print(f"val_loss {loss:.5f} val_acc {acc:.4f}")
    first = model.features[0][0]
    print(f"conv0 weight filter-mean abs {first.weight.mean(dim=(1, 2, 3)).abs().max().item():.6f}")
    print(f"fc weight norm {model.fc.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
