"""Knowledge distillation with Jacobian matching (Srinivas & Fleuret, ICML 2018).

The student matches the teacher's softened outputs (KD) and the teacher's input gradients of the
true-class score (normalised), which needs a second-order term for the student.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def mlp(d_in, hidden, d_out):
    layers, d = [], d_in
    for h in hidden:
        layers += [nn.Linear(d, h), nn.Tanh()]
        d = h
    return nn.Sequential(*layers, nn.Linear(d, d_out))


def make_data(n, d, k, gen):
    w = torch.randn(d, k, generator=gen)
    x = torch.randn(n, d, generator=gen)
    y = (torch.sin(x) @ w + 0.3 * torch.randn(n, k, generator=gen)).argmax(1)
    return x, y


def train_teacher(teacher, x, y, steps, lr):
    opt = torch.optim.Adam(teacher.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(teacher(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    teacher.eval().requires_grad_(False)
    with torch.no_grad():
        acc = (teacher(x).argmax(1) == y).float().mean().item()
    print(f"teacher acc {acc:.3f}")


def distill_loss(student, teacher, x, y, temperature, lam):
    x = x.clone().requires_grad_(True)
    s_logits = student(x)
    t_logits = teacher(x)
    # input gradients of the true-class score
    t_score = t_logits.gather(1, y[:, None]).sum()
    g_t, = torch.autograd.grad(t_score, x, create_graph=True)
    s_score = s_logits.gather(1, y[:, None]).sum()
    g_s, = torch.autograd.grad(s_score, x)
    jm = (F.normalize(g_s, dim=1) - F.normalize(g_t, dim=1)).pow(2).sum(1).mean()
    kd = F.kl_div(F.log_softmax(s_logits / temperature, dim=1),
                  F.softmax(t_logits.detach() / temperature, dim=1),
                  reduction="batchmean") * temperature ** 2
    return kd + lam * jm, {"kd": kd.item(), "jm": jm.item()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--dim", type=int, default=8)
    ap.add_argument("--classes", type=int, default=3)
    ap.add_argument("--temperature", type=float, default=2.0)
    ap.add_argument("--lam", type=float, default=1.0)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--out", default="out")
    args = ap.parse_args()

    torch.manual_seed(0)
    x, y = make_data(args.n, args.dim, args.classes, torch.Generator().manual_seed(1))
    teacher = mlp(args.dim, [64, 64], args.classes)
    train_teacher(teacher, x, y, steps=60, lr=1e-2)

    student = mlp(args.dim, [16], args.classes)
    opt = torch.optim.Adam(student.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=8, gamma=0.5)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(2))
    step = 0
    for epoch in range(args.epochs):
        for xb, yb in loader:
            loss, parts = distill_loss(student, teacher, xb, yb, args.temperature, args.lam)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            print(f"epoch {epoch} step {step:3d} loss {loss.item():.6f} kd {parts['kd']:.6f} jm {parts['jm']:.6f}")
            step += 1
    with torch.no_grad():
        acc = (student(x).argmax(1) == y).float().mean().item()
    print(f"student acc {acc:.3f}")
    os.makedirs(args.out, exist_ok=True)
    torch.save(student.state_dict(), os.path.join(args.out, "student.pt"))
    checksum = sum(p.double().sum() for p in student.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
