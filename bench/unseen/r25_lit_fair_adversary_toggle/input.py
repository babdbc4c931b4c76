"""Adversarial debiasing (Zhang, Lemoine & Mitchell, 2018) with PyTorch Lightning.

A predictor learns y from x while an adversary tries to recover the protected
attribute s from the predictor's output; the predictor is penalised by the
adversary's success.  Two optimizers, manual optimization, toggled parameter
groups so each loss only produces gradients for its own network.

Run:  python input.py
"""
import warnings

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.manual_seed(0)

CONFIG = {
    "n": 1024, "features": 8, "hidden": 32, "alpha": 0.7,
    "lr_pred": 3e-3, "lr_adv": 3e-3, "batch_size": 64, "epochs": 4, "seed": 0,
}


def make_data(n, d, seed):
    """Labels depend on x; x leaks the protected attribute s through its first feature."""
    g = torch.Generator().manual_seed(seed)
    s = (torch.rand(n, generator=g) < 0.5).float()
    x = torch.randn(n, d, generator=g)
    x[:, 0] += 1.5 * (2 * s - 1)
    w = torch.randn(d, generator=g)
    logits = x @ w + 0.8 * (2 * s - 1)
    y = (torch.rand(n, generator=g) < torch.sigmoid(logits)).float()
    return x, y, s


class FairClassifier(L.LightningModule):
    def __init__(self, features, hidden, alpha, lr_pred, lr_adv):
        super().__init__()
        self.save_hyperparameters()
        self.automatic_optimization = False
        self.predictor = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.adversary = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.epoch_stats = []

    def forward(self, x):
        return self.predictor(x).squeeze(-1)

    def adversary_logits(self, y_logit):
        return self.adversary(torch.sigmoid(y_logit).unsqueeze(-1)).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y, s = batch
        opt_pred, opt_adv = self.optimizers()

        # predictor step: fit y, fool the adversary
        self.toggle_optimizer(opt_pred)
        y_logit = self(x)
        task_loss = F.binary_cross_entropy_with_logits(y_logit, y)
        adv_loss_for_pred = F.binary_cross_entropy_with_logits(self.adversary_logits(y_logit), s)
        pred_loss = task_loss - self.hparams.alpha * adv_loss_for_pred
        self.manual_backward(pred_loss)
        opt_pred.step()
        opt_pred.zero_grad()

        # adversary step: recover s from the (fixed) predictions
        self.toggle_optimizer(opt_adv)
        adv_loss = F.binary_cross_entropy_with_logits(self.adversary_logits(y_logit.detach()), s)
        self.manual_backward(adv_loss)
        opt_adv.step()
        opt_adv.zero_grad()
        self.untoggle_optimizer(opt_adv)

        self.epoch_stats.append((task_loss.item(), adv_loss.item()))

    def on_train_epoch_end(self):
        task = sum(t for t, _ in self.epoch_stats) / len(self.epoch_stats)
        adv = sum(a for _, a in self.epoch_stats) / len(self.epoch_stats)
        print(f"epoch {self.current_epoch} task_loss {task:.6f} adv_loss {adv:.6f}")
        self.epoch_stats = []

    def configure_optimizers(self):
        return (torch.optim.Adam(self.predictor.parameters(), lr=self.hparams.lr_pred),
                torch.optim.Adam(self.adversary.parameters(), lr=self.hparams.lr_adv))


def demographic_parity_gap(model, x, s):
    with torch.no_grad():
        p = torch.sigmoid(model(x))
    return (p[s == 1].mean() - p[s == 0].mean()).abs().item()


def main():
    cfg = CONFIG
    L.seed_everything(cfg["seed"], verbose=False)
    x, y, s = make_data(cfg["n"], cfg["features"], cfg["seed"])
    loader = DataLoader(TensorDataset(x, y, s), batch_size=cfg["batch_size"], shuffle=True,
                        generator=torch.Generator().manual_seed(cfg["seed"]))
    model = FairClassifier(cfg["features"], cfg["hidden"], cfg["alpha"], cfg["lr_pred"], cfg["lr_adv"])
    trainer = L.Trainer(max_epochs=cfg["epochs"], accelerator="cpu", devices=1, logger=False,
                        enable_progress_bar=False, enable_checkpointing=False,
                        enable_model_summary=False)
    trainer.fit(model, loader)
    acc = ((model(x) > 0).float() == y).float().mean().item()
    print(f"accuracy {acc:.4f} dp_gap {demographic_parity_gap(model, x, s):.6f}")
    checksum = sum(p.double().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
