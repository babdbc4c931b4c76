"""Behaviour cloning of a Gaussian policy with PyTorch Lightning.
Run: python input.py [--epochs 6 --hidden 64 ...]"""
import argparse
import math

import lightning as L
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def expert_demos(n, obs_dim, act_dim, seed):
    """Demonstrations of a fixed nonlinear expert; the first action dims are almost
    deterministic, the last one is noisy."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(obs_dim, act_dim, generator=torch.Generator().manual_seed(99)) / math.sqrt(obs_dim)
    obs = torch.randn(n, obs_dim, generator=g)
    noise_std = torch.tensor([0.01] * (act_dim - 1) + [0.3])
    act = torch.tanh(obs @ w) + noise_std * torch.randn(n, act_dim, generator=g)
    return obs, act


def gaussian_nll(actions, means, log_stds):
    var = torch.exp(2 * log_stds)
    return (0.5 * (actions - means) ** 2 / var + log_stds + 0.5 * math.log(2 * math.pi)).sum(-1).mean()


class GaussianPolicy(L.LightningModule):
    def __init__(self, obs_dim, act_dim, hidden, lr, log_std_min=-3.0, log_std_max=1.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, 2 * act_dim),
        )

    def forward(self, obs):
        means, log_stds = self.net(obs).chunk(2, dim=-1)
        log_stds = log_stds.clamp(self.hparams.log_std_min, self.hparams.log_std_max)
        return means, log_stds

    def training_step(self, batch, batch_idx):
        obs, act = batch
        means, log_stds = self(obs)
        loss = gaussian_nll(act, means, log_stds)
        self.log("train_nll", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        obs, act = batch
        means, log_stds = self(obs)
        self.log("val_nll", gaussian_nll(act, means, log_stds))
        self.log("val_mse", torch.mean((means - act) ** 2))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


class PrintMetrics(L.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        m = trainer.callback_metrics
        print(f"epoch {trainer.current_epoch} train_nll {m['train_nll']:.5f} "
              f"val_nll {m['val_nll']:.5f} val_mse {m['val_mse']:.6f}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    L.seed_everything(args.seed, verbose=False)
    obs_dim, act_dim = 8, 3
    train = TensorDataset(*expert_demos(1024, obs_dim, act_dim, seed=1))
    val = TensorDataset(*expert_demos(256, obs_dim, act_dim, seed=2))
    train_dl = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                          generator=torch.Generator().manual_seed(args.seed))
    val_dl = DataLoader(val, batch_size=256)

    policy = GaussianPolicy(obs_dim, act_dim, args.hidden, args.lr)
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[PrintMetrics()])
    trainer.fit(policy, train_dl, val_dl)
    with torch.no_grad():
        _, log_stds = policy(val.tensors[0][:256])
    print("mean log_std " + " ".join(f"{v:.4f}" for v in log_stds.mean(0).tolist()))
    print(f"checksum {sum(p.abs().sum() for p in policy.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
