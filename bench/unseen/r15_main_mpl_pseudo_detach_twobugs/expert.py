"""Meta Pseudo Labels (Pham et al., 2021) on two moons, following kekmodel/MPL-pytorch:
the teacher pseudo-labels unlabeled data for the student and is itself updated from the change
of the student's loss on labeled data.

    python input.py --config config.yaml
"""
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml


def two_moons(n, noise, g):
    t = torch.rand(n, generator=g) * math.pi
    upper = torch.rand(n, generator=g) < 0.5
    x = torch.where(upper[:, None],
                    torch.stack([torch.cos(t), torch.sin(t)], 1),
                    torch.stack([1 - torch.cos(t), 0.5 - torch.sin(t)], 1))
    return x + noise * torch.randn(n, 2, generator=g), (~upper).long()


def net(hidden):
    return nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, 2))


def soft_ce(logits, target_probs):
    return -(target_probs * F.log_softmax(logits, -1)).sum(-1).mean()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.yaml"))
    cfg = yaml.safe_load(open(p.parse_args().config))
    d, m, tr = cfg["data"], cfg["model"], cfg["train"]
    torch.manual_seed(tr["seed"])
    g = torch.Generator().manual_seed(tr["seed"])
    xl, yl = two_moons(d["n_labeled"], d["noise"], g)
    xu, _ = two_moons(d["n_unlabeled"], d["noise"], g)
    xt, yt = two_moons(512, d["noise"], g)

    teacher, student = net(m["hidden"]), net(m["hidden"])
    t_opt = torch.optim.SGD(teacher.parameters(), lr=tr["teacher_lr"], momentum=0.9)
    s_opt = torch.optim.SGD(student.parameters(), lr=tr["student_lr"], momentum=0.9)

    for step in range(1, tr["steps"] + 1):
        idx = torch.randint(0, xu.shape[0], (tr["batch_unlabeled"],), generator=g)
        xb = xu[idx]
        t_opt.zero_grad()
        s_opt.zero_grad()

        t_logits_l, t_logits_u = teacher(xl), teacher(xb)
        t_loss_l = F.cross_entropy(t_logits_l, yl)
        soft_pseudo = torch.softmax(t_logits_u / tr["temperature"], dim=-1)
        hard_pseudo = soft_pseudo.argmax(-1)

        s_logits_l = student(xl)
        s_loss_l_old = F.cross_entropy(s_logits_l.detach(), yl)
        s_loss = soft_ce(student(xb), soft_pseudo.detach())
        s_loss.backward()
        s_opt.step()

        with torch.no_grad():
            s_loss_l_new = F.cross_entropy(student(xl), yl)
        dot_product = s_loss_l_new - s_loss_l_old
        t_loss_mpl = dot_product * F.cross_entropy(t_logits_u, hard_pseudo)
        t_loss = t_loss_l + t_loss_mpl
        t_loss.backward()
        t_opt.step()

        if step % 10 == 0:
            print(f"step {step:3d} s_loss {s_loss.item():.4f} t_loss {t_loss.item():.4f} "
                  f"mpl {t_loss_mpl.item():.4f}")

    with torch.no_grad():
        s_acc = (student(xt).argmax(1) == yt).float().mean().item()
        t_acc = (teacher(xt).argmax(1) == yt).float().mean().item()
    print(f"final student_acc {s_acc:.4f} teacher_acc {t_acc:.4f}")


if __name__ == "__main__":
    main()
