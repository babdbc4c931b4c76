"""Excitatory-inhibitory rate RNN (Dale's law) on a perceptual decision task, in Lightning 2.x.

Song, Yang & Wang (2016) style: 80% excitatory units whose outgoing (column) weights must stay
>= 0, 20% inhibitory units whose outgoing weights must stay <= 0.  The sign constraint is kept by
projecting the recurrent matrix after every optimizer step.
"""
import os

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_task(n_trials, steps, gen):
    coh = (torch.randint(0, 2, (n_trials,), generator=gen) * 2 - 1) * (0.1 + 0.4 * torch.rand(n_trials, generator=gen))
    noise = 0.8 * torch.randn(n_trials, steps, generator=gen)
    evidence = coh[:, None] + noise
    evidence[:, :5] = 0.0                      # fixation period
    fixation = torch.ones(n_trials, steps)
    fixation[:, -3:] = 0.0                     # go cue
    u = torch.stack([fixation, evidence], dim=-1)
    target = (coh > 0).long()
    return u, target


class EIRNN(nn.Module):
    def __init__(self, n_in, n_hidden, n_out, frac_exc=0.8, alpha=0.2):
        super().__init__()
        self.n_exc = int(frac_exc * n_hidden)
        self.alpha = alpha
        self.w_in = nn.Linear(n_in, n_hidden)
        w = torch.rand(n_hidden, n_hidden) / n_hidden ** 0.5
        w[:, self.n_exc:] *= -self.n_exc / (n_hidden - self.n_exc)   # balanced E/I
        self.w_rec = nn.Parameter(w)
        self.readout = nn.Linear(self.n_exc, n_out)

    def forward(self, u):
        x = torch.zeros(u.shape[0], self.w_rec.shape[0])
        for t in range(u.shape[1]):
            r = F.relu(x)
            x = (1 - self.alpha) * x + self.alpha * (r @ self.w_rec.t() + self.w_in(u[:, t]))
        return self.readout(F.relu(x)[:, : self.n_exc])


class DecisionModule(L.LightningModule):
    def __init__(self, n_hidden=32, lr=5e-3):
        super().__init__()
        self.save_hyperparameters()
        self.rnn = EIRNN(2, n_hidden, 2)

    def training_step(self, batch, batch_idx):
        u, y = batch
        logits = self.rnn(u)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(-1) == y).float().mean()
        print(f"step {self.global_step:3d} loss {loss.item():.6f} acc {acc.item():.3f}")
        return loss

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
        optimizer.step(closure=optimizer_closure)
        # keep Dale's law after every update
        n_exc = self.rnn.n_exc
        with torch.no_grad():
            self.rnn.w_rec[:, :n_exc].clamp_(min=0.0)
            self.rnn.w_rec[:, n_exc:].clamp_(max=0.0)


def main():
    L.seed_everything(0, verbose=False)
    u, y = make_task(384, 25, torch.Generator().manual_seed(1))
    loader = DataLoader(TensorDataset(u, y), batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(2))
    model = DecisionModule()
    trainer = L.Trainer(max_steps=24, enable_checkpointing=False, logger=False,
                        enable_progress_bar=False, enable_model_summary=False,
                        accelerator="cpu", devices=1)
    trainer.fit(model, loader)
    w = model.rnn.w_rec.detach()
    n_exc = model.rnn.n_exc
    print(f"dale ok: {bool((w[:, :n_exc] >= 0).all() and (w[:, n_exc:] <= 0).all())}")
    os.makedirs("out", exist_ok=True)
    torch.save(model.state_dict(), "out/eirnn.pt")
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
