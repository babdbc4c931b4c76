"""Knowledge distillation of an MLP teacher into a small student with PyTorch Lightning.

The teacher is trained first (plain loop); its logits for the training set are computed once when
fitting starts and cached on the LightningModule (the inputs are not augmented, so they do not change).

    python input.py --config kd.yaml
"""
import argparse
import warnings

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")


def mlp(dim, hidden, classes):
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, classes))


def make_data(n, dim, classes, gen):
    centers = torch.randn(classes * 3, dim, generator=torch.Generator().manual_seed(99)) * 0.7
    comp = torch.randint(0, classes * 3, (n,), generator=gen)
    x = centers[comp] + torch.randn(n, dim, generator=gen)
    return x, comp % classes


class Distiller(L.LightningModule):
    def __init__(self, teacher, student, x_train, cfg):
        super().__init__()
        self.teacher, self.student = teacher, student
        self.x_train = x_train
        self.cfg = cfg
        self.teacher_logits = None
        self.history = []

    def on_fit_start(self):
        # the training inputs are fixed, so the teacher only has to be run once
        self.teacher.eval()
        self.teacher_logits = self.teacher(self.x_train)

    def training_step(self, batch, batch_idx):
        idx, x, y = batch
        T, alpha = self.cfg["temperature"], self.cfg["alpha"]
        s_logits = self.student(x)
        soft = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(self.teacher_logits[idx] / T, dim=1),
                        reduction="batchmean") * T * T
        hard = F.cross_entropy(s_logits, y)
        loss = alpha * soft + (1 - alpha) * hard
        self.history.append((soft.item(), hard.item()))
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.student(x)
        self.val_stats = (F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item())

    def on_train_epoch_end(self):
        soft = sum(h[0] for h in self.history) / len(self.history)
        hard = sum(h[1] for h in self.history) / len(self.history)
        print(f"epoch {self.current_epoch} soft {soft:.5f} hard {hard:.5f} "
              f"val_loss {self.val_stats[0]:.5f} val_acc {self.val_stats[1]:.4f}")
        self.history.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.cfg["lr"])


def train_teacher(teacher, x, y, epochs, lr):
    opt = torch.optim.Adam(teacher.parameters(), lr=lr)
    for _ in range(epochs):
        loss = F.cross_entropy(teacher(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="kd.yaml")
    args = p.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    L.seed_everything(cfg["seed"], verbose=False)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg["seed"])
    d = cfg["data"]
    x_tr, y_tr = make_data(d["n_train"], d["dim"], d["classes"], gen)
    x_va, y_va = make_data(d["n_val"], d["dim"], d["classes"], gen)

    teacher = mlp(d["dim"], cfg["teacher"]["hidden"], d["classes"])
    t_loss = train_teacher(teacher, x_tr, y_tr, cfg["teacher"]["epochs"], cfg["teacher"]["lr"])
    with torch.no_grad():
        t_acc = (teacher(x_va).argmax(1) == y_va).float().mean().item()
    print(f"teacher train_loss {t_loss:.5f} val_acc {t_acc:.4f}")

    student = mlp(d["dim"], cfg["student"]["hidden"], d["classes"])
    kd = cfg["distill"]
    model = Distiller(teacher, student, x_tr, kd)
    train_dl = DataLoader(TensorDataset(torch.arange(len(x_tr)), x_tr, y_tr), batch_size=kd["batch_size"],
                          shuffle=True, generator=gen)
    val_dl = DataLoader(TensorDataset(x_va, y_va), batch_size=len(x_va))
    trainer = L.Trainer(max_epochs=kd["epochs"], accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0, deterministic=True)
    trainer.fit(model, train_dl, val_dl)
    print(f"student weight norm {sum(p.norm() ** 2 for p in student.parameters()).sqrt().item():.5f}")


if __name__ == "__main__":
    main()
