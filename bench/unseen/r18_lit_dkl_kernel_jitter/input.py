"""Deep kernel learning (Wilson et al. 2016) with an exact GP head, in Lightning.

An MLP maps inputs to a low-dimensional feature space where an RBF kernel is
evaluated; the feature extractor and the kernel hyperparameters (lengthscale,
outputscale, Gaussian noise) are trained jointly by maximising the exact GP
marginal likelihood of each minibatch.
"""
import logging
import math
from pathlib import Path

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset

logging.getLogger("lightning").setLevel(logging.ERROR)
logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)


class RBFKernel(nn.Module):
    def __init__(self, init_lengthscale):
        super().__init__()
        self.log_lengthscale = nn.Parameter(torch.tensor(math.log(init_lengthscale)))
        self.log_outputscale = nn.Parameter(torch.tensor(0.0))

    def forward(self, a, b):
        sq = torch.cdist(a, b).pow(2)
        return torch.exp(self.log_outputscale - 0.5 * sq / self.log_lengthscale.exp().pow(2))


class ExactGPHead(nn.Module):
    def __init__(self, init_lengthscale, init_noise, jitter):
        super().__init__()
        self.kernel = RBFKernel(init_lengthscale)
        self.raw_noise = nn.Parameter(torch.tensor(math.log(math.expm1(init_noise))))
        self.jitter = jitter

    @property
    def noise(self):
        return F.softplus(self.raw_noise)

    def train_covariance(self, f):
        K = self.kernel(f, f)
        K.diagonal().add_(self.noise + self.jitter)
        return K

    def marginal_log_likelihood(self, f, y):
        n = y.shape[0]
        K = self.train_covariance(f)
        Lc = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y.unsqueeze(-1), Lc).squeeze(-1)
        fit = -0.5 * (y * alpha).sum()
        complexity = -Lc.diagonal().log().sum()
        return (fit + complexity - 0.5 * n * math.log(2 * math.pi)) / n

    def posterior_mean(self, f_ctx, y_ctx, f_new):
        K = self.train_covariance(f_ctx)
        alpha = torch.cholesky_solve(y_ctx.unsqueeze(-1), torch.linalg.cholesky(K)).squeeze(-1)
        return self.kernel(f_new, f_ctx) @ alpha


class DeepKernelGP(L.LightningModule):
    def __init__(self, hp, context):
        super().__init__()
        self.hp = hp
        self.features = nn.Sequential(
            nn.Linear(hp["in_dim"], hp["hidden"]), nn.SiLU(),
            nn.Linear(hp["hidden"], hp["hidden"]), nn.SiLU(),
            nn.Linear(hp["hidden"], hp["feat_dim"], bias=False),  # RBF is shift-invariant
        )
        self.gp = ExactGPHead(hp["init_lengthscale"], hp["init_noise"], hp["jitter"])
        self.register_buffer("ctx_x", context[0])
        self.register_buffer("ctx_y", context[1])
        self._train_losses, self._val_se = [], []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = -self.gp.marginal_log_likelihood(self.features(x), y)
        self._train_losses.append(loss.detach())
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        mean = self.gp.posterior_mean(self.features(self.ctx_x), self.ctx_y, self.features(x))
        self._val_se.append((mean - y).pow(2))

    def on_validation_epoch_end(self):
        if self.trainer.sanity_checking:
            self._val_se.clear()
            return
        rmse = torch.cat(self._val_se).mean().sqrt().item()
        self._val_se.clear()
        tl = torch.stack(self._train_losses).mean().item()
        self._train_losses.clear()
        ls = self.gp.kernel.log_lengthscale.exp().item()
        print(f"epoch {self.current_epoch} train_nmll {tl:.5f} val_rmse {rmse:.5f} "
              f"noise {self.gp.noise.item():.5f} lengthscale {ls:.5f}")

    def configure_optimizers(self):
        return torch.optim.Adam([
            {"params": self.features.parameters()},
            {"params": self.gp.parameters(), "lr": self.hp["lr"] * 2},
        ], lr=self.hp["lr"])


def make_data(hp, g):
    n = hp["n_train"] + hp["n_val"]
    x = torch.rand(n, hp["in_dim"], generator=g) * 4 - 2
    y = torch.sin(2.5 * x[:, 0]) + 0.5 * x[:, 1] ** 2 - 0.3 * x[:, 2] * x[:, 3]
    y = y + 0.1 * torch.randn(n, generator=g)
    y = (y - y.mean()) / y.std()
    return (x[:hp["n_train"]], y[:hp["n_train"]]), (x[hp["n_train"]:], y[hp["n_train"]:])


def main():
    hp = yaml.safe_load(Path(__file__).with_name("hparams.yaml").read_text())
    L.seed_everything(hp["seed"], verbose=False)
    g = torch.Generator().manual_seed(hp["seed"])
    (xtr, ytr), (xva, yva) = make_data(hp, g)
    train_dl = DataLoader(TensorDataset(xtr, ytr), batch_size=hp["batch_size"], shuffle=True,
                          generator=g, drop_last=True)
    val_dl = DataLoader(TensorDataset(xva, yva), batch_size=hp["n_val"])
    model = DeepKernelGP(hp, context=(xtr[:128], ytr[:128]))
    trainer = L.Trainer(accelerator="cpu", devices=1, max_epochs=hp["max_epochs"], logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, num_sanity_val_steps=0)
    trainer.fit(model, train_dl, val_dl)
    w = torch.cat([p.detach().flatten() for p in model.features.parameters()])
    print(f"final log_outputscale {model.gp.kernel.log_outputscale.item():.5f} feature_norm {w.norm():.5f}")


if __name__ == "__main__":
    main()
