import copy
from pathlib import Path

import torch
import yaml

from .data import mode_distance, sample_ring
from .nets import ConsistencyModel, TimeMLP
from .sampling import ddim_step, sample_consistency, sample_ddim
from .schedule import T_MAX, T_MIN, alpha, sigma, time_grid


def load_config():
    return yaml.safe_load((Path(__file__).resolve().parent / "config.yaml").read_text())


def train_teacher(cfg, gen):
    tc, dc = cfg["teacher"], cfg["data"]
    teacher = TimeMLP(**cfg["model"])
    opt = torch.optim.Adam(teacher.parameters(), lr=tc["lr"])
    for step in range(1, tc["steps"] + 1):
        x0 = sample_ring(tc["batch_size"], dc["n_modes"], dc["radius"], dc["std"], gen)
        t = T_MIN + torch.rand(x0.shape[0], generator=gen) * (T_MAX - T_MIN)
        eps = torch.randn(x0.shape, generator=gen)
        xt = alpha(t)[:, None] * x0 + sigma(t)[:, None] * eps
        loss = (teacher(xt, t) - eps).pow(2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 200 == 0:
            print(f"teacher step {step}  loss {loss.item():.4f}")
    teacher.requires_grad_(False)
    return teacher.eval()


def distill(cfg, teacher, gen):
    dc, kc = cfg["data"], cfg["distill"]
    student = ConsistencyModel(copy.deepcopy(teacher).requires_grad_(True).train())
    target = copy.deepcopy(student).requires_grad_(False)
    opt = torch.optim.Adam(student.parameters(), lr=kc["lr"])
    ts = time_grid(kc["n_discretization"])
    for step in range(1, kc["steps"] + 1):
        x0 = sample_ring(kc["batch_size"], dc["n_modes"], dc["radius"], dc["std"], gen)
        n = torch.randint(0, kc["n_discretization"], (x0.shape[0],), generator=gen)
        t_hi, t_lo = ts[n + 1], ts[n]
        noise = torch.randn(x0.shape, generator=gen)
        x_hi = alpha(t_hi)[:, None] * x0 + sigma(t_hi)[:, None] * noise

        pred = student(x_hi, t_hi)
        with torch.no_grad():
            x_lo = ddim_step(teacher, x_hi, t_hi, t_lo)
            tgt = target(x_lo, t_lo)
        loss = (pred - tgt).pow(2).sum(1).mean()

        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pt, ps in zip(target.parameters(), student.parameters()):
                pt.mul_(kc["ema_decay"]).add_(ps, alpha=1 - kc["ema_decay"])
        if step % 100 == 0:
            print(f"distill step {step}  loss {loss.item():.5f}")
    return student, target


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    teacher = train_teacher(cfg, gen)
    student, target = distill(cfg, teacher, gen)

    ec, dc = cfg["eval"], cfg["data"]
    x_ddim = sample_ddim(teacher, ec["n_samples"], ec["ddim_steps"], torch.Generator().manual_seed(7))
    x_cm = sample_consistency(target, ec["n_samples"], torch.Generator().manual_seed(7))
    print(f"teacher {ec['ddim_steps']}-step DDIM mode distance {mode_distance(x_ddim, dc['n_modes'], dc['radius']):.4f}")
    print(f"consistency 1-step mode distance {mode_distance(x_cm, dc['n_modes'], dc['radius']):.4f}")
    print(f"student checksum {sum(p.double().abs().sum().item() for p in student.parameters()):.4f}")


if __name__ == "__main__":
    main()
