"""Residual MLP with stochastic depth (DropPath), trained with PyTorch Lightning."""
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class DropPath(nn.Module):
    """Stochastic depth per sample (Huang et al. 2016), applied to a residual branch."""

    def __init__(self, drop_prob=0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep_prob = 1 - self.drop_prob
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep_prob)
        return x.div(keep_prob) * mask


class ResBlock(nn.Module):
    def __init__(self, dim, drop_path):
        super().__init__()
        self.branch = nn.Sequential(nn.Linear(dim, dim), nn.BatchNorm1d(dim), nn.ReLU())
        self.drop_path = DropPath(drop_path)

    def forward(self, x):
        return x + self.drop_path(self.branch(x))


class LitResMLP(L.LightningModule):
    def __init__(self, in_dim=10, dim=32, depth=4, n_cls=3, drop_path_rate=0.3, lr=0.01):
        super().__init__()
        self.save_hyperparameters()
        self.stem = nn.Linear(in_dim, dim)
        rates = [drop_path_rate * i / (depth - 1) for i in range(depth)]
        self.blocks = nn.Sequential(*[ResBlock(dim, r) for r in rates])
        self.head = nn.Linear(dim, n_cls)
        self.step_losses = []

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.step_losses.append(loss.detach())
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


def main():
    torch.manual_seed(0)
    X = torch.randn(512, 10)
    y = ((X[:, 0] > 0).long() + (X[:, 1] * X[:, 2] > 0).long())
    loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    model = LitResMLP()
    trainer = L.Trainer(accelerator="cpu", max_epochs=3, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, loader)
    losses = torch.stack(model.step_losses)
    for i in (0, 8, 16, len(losses) - 1):
        print(f"step {i} loss {losses[i].item():.6f}")
    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(1) == y).float().mean().item()
    print(f"acc {acc:.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
