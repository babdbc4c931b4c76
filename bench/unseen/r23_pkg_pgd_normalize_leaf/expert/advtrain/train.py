from pathlib import Path

import torch
import torch.nn.functional as F
import yaml

from .attack import pgd
from .model import build_model


def main():
    cfg = yaml.safe_load((Path(__file__).parent / "config.yaml").read_text())
    torch.manual_seed(0)
    protos = torch.rand(4, 3, 8, 8)
    y_all = torch.randint(0, 4, (400,))
    X_all = (0.7 * protos[y_all] + 0.3 * torch.rand(400, 3, 8, 8)).clamp(0, 1)

    model = build_model(cfg["mean"], cfg["std"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    for step in range(cfg["steps"]):
        idx = torch.randint(0, 400, (cfg["batch"],))
        x, y = X_all[idx], y_all[idx]
        x_adv = pgd(model, x, y, cfg["eps"], cfg["alpha"], cfg["pgd_steps"])
        loss = F.cross_entropy(model(x_adv), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 5 == 0 or step == cfg["steps"] - 1:
            print(f"step {step} adv_loss {loss.item():.6f} delta {(x_adv - x).abs().mean().item():.6f}")

    with torch.no_grad():
        acc = (model(X_all).argmax(1) == y_all).float().mean().item()
    print(f"clean acc {acc:.6f}")
    print(f"data checksum {X_all.sum().item():.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
