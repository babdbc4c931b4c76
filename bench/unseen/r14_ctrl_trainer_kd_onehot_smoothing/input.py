import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))


def make_data(n, dim, classes, gen):
    w = torch.randn(dim, classes, generator=gen)
    x = torch.randn(n, dim, generator=gen)
    logits = x @ w + torch.sin(2 * x[:, :classes]) + 0.3 * torch.randn(n, classes, generator=gen)
    return x, logits.argmax(-1)


def mlp(dim, hidden, classes):
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, hidden),
                         nn.ReLU(inplace=True), nn.Linear(hidden, classes))


class DistillTrainer:
    def __init__(self, cfg, teacher, student, train_loader, val_data):
        self.cfg = cfg
        self.teacher, self.student = teacher.eval(), student
        self.train_loader, self.val_data = train_loader, val_data
        self.opt = torch.optim.Adam(student.parameters(), lr=cfg["train"]["lr"])
        self.num_classes = cfg["data"]["classes"]

    def hard_targets(self, y, epoch):
        d = self.cfg["distill"]
        t = F.one_hot(y, self.num_classes)
        if epoch >= d["smoothing_from_epoch"]:
            t.mul_(1.0 - d["label_smoothing"]).add_(d["label_smoothing"] / self.num_classes)
        return t

    def train_step(self, x, y, epoch):
        d = self.cfg["distill"]
        T = d["temperature"]
        with torch.no_grad():
            t_logits = self.teacher(x)
            t_logits.div_(T)
            t_prob = t_logits.softmax(-1)
        s_logits = self.student(x)
        kd = F.kl_div(F.log_softmax(s_logits / T, -1), t_prob, reduction="batchmean") * T * T
        hard = self.hard_targets(y, epoch)
        ce = -(hard * F.log_softmax(s_logits, -1)).sum(-1).mean()
        loss = d["alpha"] * kd + (1 - d["alpha"]) * ce
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self):
        x, y = self.val_data
        self.student.eval()
        acc = (self.student(x).argmax(-1) == y).float().mean().item()
        self.student.train()
        return acc

    def fit(self):
        for epoch in range(1, self.cfg["train"]["epochs"] + 1):
            losses = [self.train_step(x, y, epoch) for x, y in self.train_loader]
            print(f"epoch {epoch} loss {sum(losses) / len(losses):.4f} val_acc {self.evaluate():.4f}")


def train_teacher(teacher, loader, epochs):
    opt = torch.optim.Adam(teacher.parameters(), lr=0.005)
    for _ in range(epochs):
        for x, y in loader:
            loss = F.cross_entropy(teacher(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    for p in teacher.parameters():
        p.requires_grad_(False)
    return teacher


def main():
    with open(os.path.join(HERE, "kd.yaml")) as f:
        cfg = yaml.safe_load(f)
    gen = torch.Generator().manual_seed(cfg["seed"])
    d = cfg["data"]
    x, y = make_data(d["n_train"] + d["n_val"], d["dim"], d["classes"], gen)
    train_ds = TensorDataset(x[: d["n_train"]], y[: d["n_train"]])
    val = (x[d["n_train"]:], y[d["n_train"]:])
    loader = DataLoader(train_ds, batch_size=cfg["train"]["batch_size"], shuffle=True, generator=gen)

    torch.manual_seed(cfg["seed"])
    teacher = train_teacher(mlp(d["dim"], cfg["teacher"]["hidden"], d["classes"]), loader, cfg["teacher"]["epochs"])
    with torch.no_grad():
        t_acc = (teacher(val[0]).argmax(-1) == val[1]).float().mean().item()
    print(f"teacher val_acc {t_acc:.4f}")
    student = mlp(d["dim"], cfg["student"]["hidden"], d["classes"])
    DistillTrainer(cfg, teacher, student, loader, val).fit()


if __name__ == "__main__":
    main()
