import json
from pathlib import Path

import torch
import torch.nn.functional as F
import torch.nn.utils.parametrize as P

from .model import MetricProtoNet


def load_config():
    return json.loads((Path(__file__).parent / "config.json").read_text())


def main():
    cfg = load_config()
    torch.manual_seed(0)
    centers = torch.randn(cfg["n_classes"], cfg["in_dim"]) * 1.5
    y_all = torch.randint(0, cfg["n_classes"], (600,))
    X_all = centers[y_all] + torch.randn(600, cfg["in_dim"])

    model = MetricProtoNet(cfg["in_dim"], cfg["emb_dim"], cfg["n_classes"], cfg["eps"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)

    # the SPD weight is read twice per step (forward + penalty): compute it once
    with P.cached():
        for step in range(cfg["steps"]):
            idx = torch.randint(0, 600, (cfg["batch"],))
            logits = model(X_all[idx])
            loss = F.cross_entropy(logits, y_all[idx]) + cfg["trace_weight"] * model.trace_penalty()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 10 == 0 or step == cfg["steps"] - 1:
                print(f"step {step} loss {loss.item():.6f}")

    with torch.no_grad():
        acc = (model(X_all).argmax(1) == y_all).float().mean().item()
        print(f"acc {acc:.6f}")
        print(f"metric trace {model.metric.weight.diagonal().sum().item():.6f}")
        print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
