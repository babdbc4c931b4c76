"""WGAN (weight-clipping critic) on a 2-D ring of Gaussians, trained with
Lightning manual optimization: n_critic critic updates per generator update."""
import math

import lightning as L
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def ring_data(n=512, modes=6, radius=2.0, std=0.1):
    k = torch.arange(n) % modes
    angle = 2 * math.pi * k.float() / modes
    centers = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)
    return centers + std * torch.randn(n, 2)


class WGAN(L.LightningModule):
    def __init__(self, latent_dim=4, clip_value=0.05, n_critic=2, lr=5e-4):
        super().__init__()
        self.save_hyperparameters()
        self.automatic_optimization = False
        self.generator = nn.Sequential(
            nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2)
        )
        self.critic = nn.Sequential(
            nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1)
        )
        self.d_hist, self.g_hist = [], []

    def configure_optimizers(self):
        opt_g = torch.optim.RMSprop(self.generator.parameters(), lr=self.hparams.lr)
        opt_d = torch.optim.RMSprop(self.critic.parameters(), lr=self.hparams.lr)
        return opt_g, opt_d

    def training_step(self, batch, batch_idx):
        (real,) = batch
        opt_g, opt_d = self.optimizers()
        z = torch.randn(real.shape[0], self.hparams.latent_dim)
        fake = self.generator(z)

        # ---- critic: maximise D(real) - D(fake)
        d_loss = self.critic(fake).mean() - self.critic(real).mean()
        self.manual_backward(d_loss)
        opt_d.step()
        opt_d.zero_grad()
        # Lipschitz constraint by weight clipping (Arjovsky et al.)
        for p in self.critic.parameters():
            p.clamp_(-self.hparams.clip_value, self.hparams.clip_value)
        self.d_hist.append(-d_loss.item())

        # ---- generator every n_critic steps
        if (batch_idx + 1) % self.hparams.n_critic == 0:
            g_loss = -self.critic(fake).mean()
            self.manual_backward(g_loss)
            opt_g.step()
            opt_g.zero_grad()
            self.g_hist.append(g_loss.item())

    def on_train_epoch_end(self):
        with torch.no_grad():
            sample = self.generator(torch.randn(256, self.hparams.latent_dim))
            radius = sample.norm(dim=1).mean().item()
        print(f"epoch {self.current_epoch} w_est {sum(self.d_hist) / len(self.d_hist):.5f} "
              f"g_loss {sum(self.g_hist) / len(self.g_hist):.5f} radius {radius:.5f}")
        self.d_hist.clear()
        self.g_hist.clear()


def main():
    torch.manual_seed(0)
    data = ring_data()
    loader = DataLoader(TensorDataset(data), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    model = WGAN()
    trainer = L.Trainer(accelerator="cpu", max_epochs=4, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(model, loader)


if __name__ == "__main__":
    main()
