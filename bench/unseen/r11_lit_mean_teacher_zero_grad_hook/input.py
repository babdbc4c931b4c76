"""Mean Teacher (Tarvainen & Valpola 2017) on two moons with 24 labels, in PyTorch Lightning.

The teacher is an exponential moving average of the student; the student is trained with
cross-entropy on the labeled points plus a consistency loss towards the teacher's predictions
on noisy unlabeled points.
"""
import argparse
import copy
import math
from pathlib import Path

import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset


def two_moons(n, noise, generator):
    t = torch.rand(n, generator=generator) * math.pi
    y = torch.randint(0, 2, (n,), generator=generator)
    x = torch.stack([torch.cos(t), torch.sin(t)], dim=1)
    x[y == 1] = torch.stack([1 - torch.cos(t[y == 1]), 0.5 - torch.sin(t[y == 1])], dim=1)
    return x + noise * torch.randn(n, 2, generator=generator), y


class MeanTeacher(pl.LightningModule):
    def __init__(self, hp, x_lab, y_lab):
        super().__init__()
        self.hp = hp
        self.student = nn.Sequential(nn.Linear(2, hp["hidden"]), nn.Tanh(),
                                     nn.Linear(hp["hidden"], hp["hidden"]), nn.Tanh(),
                                     nn.Linear(hp["hidden"], 2))
        self.teacher = copy.deepcopy(self.student)
        self.register_buffer("x_lab", x_lab)
        self.register_buffer("y_lab", y_lab)
        self.history = []

    def training_step(self, batch, batch_idx):
        (x_u,) = batch
        sigma = self.hp["input_noise"]
        sup = F.cross_entropy(self.student(self.x_lab), self.y_lab)
        p_student = F.softmax(self.student(x_u + sigma * torch.randn_like(x_u)), dim=1)
        p_teacher = F.softmax(self.teacher(x_u + sigma * torch.randn_like(x_u)), dim=1)
        cons = F.mse_loss(p_student, p_teacher)
        loss = sup + self.hp["consistency_weight"] * cons
        self.history.append((sup.item(), cons.item()))
        return loss

    def on_before_zero_grad(self, optimizer):
        # EMA of the student's weights into the teacher, once per optimisation step
        with torch.no_grad():
            a = self.hp["ema_decay"]
            for t, s in zip(self.teacher.parameters(), self.student.parameters()):
                t.mul_(a).add_(s, alpha=1 - a)

    def on_train_epoch_end(self):
        sup = sum(h[0] for h in self.history) / len(self.history)
        cons = sum(h[1] for h in self.history) / len(self.history)
        self.history.clear()
        print(f"epoch {self.current_epoch} sup {sup:.5f} cons {cons:.5f}")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hp["lr"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hparams", default=str(Path(__file__).resolve().parent / "hparams.yaml"))
    hp = yaml.safe_load(open(parser.parse_args().hparams))
    pl.seed_everything(hp["seed"], verbose=False)

    g = torch.Generator().manual_seed(hp["seed"])
    x_lab, y_lab = two_moons(hp["n_labeled"], 0.1, g)
    x_unl, _ = two_moons(hp["n_unlabeled"], 0.1, g)
    x_test, y_test = two_moons(1000, 0.1, g)
    loader = DataLoader(TensorDataset(x_unl), batch_size=hp["batch_size"], shuffle=True)

    model = MeanTeacher(hp, x_lab, y_lab)
    trainer = pl.Trainer(max_epochs=hp["epochs"], accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, loader)

    with torch.no_grad():
        for name, net in (("student", model.student), ("teacher", model.teacher)):
            acc = (net(x_test).argmax(1) == y_test).float().mean().item()
            print(f"{name} test acc {acc:.4f}")
        checksum = sum(p.double().abs().sum().item() for p in model.teacher.parameters())
    print(f"teacher checksum {checksum:.5f}")


if __name__ == "__main__":
    main()
