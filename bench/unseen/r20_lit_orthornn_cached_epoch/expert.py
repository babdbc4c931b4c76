"""Orthogonal RNN on the adding problem, trained with PyTorch Lightning.

The recurrent matrix is constrained to be orthogonal with
torch.nn.utils.parametrizations.orthogonal. Because the parametrised weight is
recomputed on every access (once per time step), the module caches it with
torch.nn.utils.parametrize.cached().
"""
import argparse

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P
from torch.nn.utils.parametrizations import orthogonal
from torch.utils.data import DataLoader, TensorDataset


def adding_problem(n, seq_len, gen):
    values = torch.rand(n, seq_len, generator=gen)
    markers = torch.zeros(n, seq_len)
    first = torch.randint(0, seq_len // 2, (n,), generator=gen)
    second = torch.randint(seq_len // 2, seq_len, (n,), generator=gen)
    markers[torch.arange(n), first] = 1.0
    markers[torch.arange(n), second] = 1.0
    x = torch.stack([values, markers], dim=-1)
    y = (values * markers).sum(1, keepdim=True)
    return x, y


class OrthoRNN(L.LightningModule):
    def __init__(self, hidden=32, lr=3e-3):
        super().__init__()
        self.save_hyperparameters()
        self.inp = nn.Linear(2, hidden)
        self.rec = orthogonal(nn.Linear(hidden, hidden, bias=False))
        self.out = nn.Linear(hidden, 1)
        self.epoch_losses = []
        self._step_losses = []

    def forward(self, x):
        h = x.new_zeros(x.shape[0], self.hparams.hidden)
        for t in range(x.shape[1]):
            h = torch.tanh(self.inp(x[:, t]) + self.rec(h))
        return self.out(h)

    def on_train_epoch_end(self):
        self.epoch_losses.append(sum(self._step_losses) / len(self._step_losses))
        self._step_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        # the orthogonal weight is used at every time step: compute it once per forward
        with P.cached():
            pred = self(x)
        loss = F.mse_loss(pred, y)
        self._step_losses.append(loss.item())
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=16)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    L.seed_everything(args.seed, verbose=False)
    gen = torch.Generator().manual_seed(args.seed + 1)
    x, y = adding_problem(256, args.seq_len, gen)
    x_val, y_val = adding_problem(128, args.seq_len, gen)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch, shuffle=False)

    model = OrthoRNN(hidden=args.hidden)
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="cpu", logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(model, loader)

    model.eval()
    with torch.no_grad():
        val = F.mse_loss(model(x_val), y_val).item()
        W = model.rec.weight
        ortho_err = (W @ W.t() - torch.eye(W.shape[0])).abs().max().item()
    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print("epoch_losses", " ".join(f"{v:.6f}" for v in model.epoch_losses))
    print(f"val_mse {val:.6f}")
    print(f"orthogonality_err_below_1e-4 {ortho_err < 1e-4}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
