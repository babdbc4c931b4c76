"""BYOL (Grill et al., 2020) as a LightningModule on synthetic 16-d "sensor windows".

Online network = encoder + projector + predictor, target network = EMA copy of encoder +
projector, updated after every batch.
"""
import argparse
import copy

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def mlp(i, h, o):
    return nn.Sequential(nn.Linear(i, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, o))


class BYOL(L.LightningModule):
    def __init__(self, in_dim=16, hidden=64, proj_dim=16, lr=0.05, tau=0.9):
        super().__init__()
        self.save_hyperparameters()
        self.online = nn.Sequential(mlp(in_dim, hidden, hidden), mlp(hidden, hidden, proj_dim))
        self.predictor = mlp(proj_dim, hidden, proj_dim)
        self.target = copy.deepcopy(self.online)
        self.epoch_losses = []

    def augment(self, x):
        scale = 1.0 + 0.2 * torch.randn(x.shape[0], 1)
        mask = (torch.rand_like(x) > 0.15).float()
        return x * scale * mask + 0.1 * torch.randn_like(x)

    @staticmethod
    def byol_loss(p, z):
        return (2 - 2 * F.cosine_similarity(p, z, dim=-1)).mean()

    def training_step(self, batch, batch_idx):
        (x, _) = batch
        x1, x2 = self.augment(x), self.augment(x)
        with torch.no_grad():
            z1_t, z2_t = self.target(x1), self.target(x2)
        p1 = self.predictor(self.online(x1))
        p2 = self.predictor(self.online(x2))
        loss = self.byol_loss(p1, z2_t) + self.byol_loss(p2, z1_t)
        self.epoch_losses.append(loss.item())
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        tau = self.hparams.tau
        with torch.no_grad():
            for pt, po in zip(self.target.parameters(), self.online.parameters()):
                pt.mul_(tau).add_(po, alpha=1 - tau)

    def on_train_epoch_end(self):
        print(f"epoch {self.current_epoch} loss {sum(self.epoch_losses) / len(self.epoch_losses):.4f}")
        self.epoch_losses.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(6, 16, generator=g)
    y = torch.randint(0, 6, (n,), generator=g)
    x = protos[y] * (0.5 + torch.rand(n, 1, generator=g)) + 0.5 * torch.randn(n, 16, generator=g)
    return x, y


@torch.no_grad()
def knn_acc(model, x, y, k=5):
    model.eval()
    e = F.normalize(model.online[0](x), dim=1)
    sim = e @ e.t()
    sim.fill_diagonal_(-2)
    votes = F.one_hot(y[sim.topk(k, 1).indices], 6).sum(1)
    return (votes.argmax(1) == y).float().mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    L.seed_everything(args.seed, verbose=False)
    x, y = make_data(384, args.seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    model = BYOL()
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, loader)
    drift = sum((a - b).pow(2).sum() for a, b in zip(model.target.parameters(), model.online.parameters()))
    print(f"final knn_acc {knn_acc(model, x, y):.4f} target_online_drift {drift.item():.4f}")


if __name__ == "__main__":
    main()
