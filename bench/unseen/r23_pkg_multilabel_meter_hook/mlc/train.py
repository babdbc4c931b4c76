from pathlib import Path

import torch
import torch.nn.functional as F
import yaml

from .metrics import MultiLabelMeter
from .model import Tagger


def main():
    cfg = yaml.safe_load((Path(__file__).parent / "config.yaml").read_text())
    torch.manual_seed(0)
    W = torch.randn(cfg["in_dim"], cfg["n_labels"])
    X = torch.randn(800, cfg["in_dim"])
    Y = ((X @ W + 0.5 * torch.randn(800, cfg["n_labels"])) > 0.3).float()

    model = Tagger(cfg["in_dim"], cfg["hidden"], cfg["n_labels"])
    meter = MultiLabelMeter(cfg["threshold"])
    meter.attach(model.head)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    for step in range(cfg["steps"]):
        idx = torch.randint(0, 800, (cfg["batch"],))
        logits = model(X[idx])
        loss = F.binary_cross_entropy_with_logits(logits, Y[idx])
        mean_prob = meter.update(Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % cfg["log_every"] == 0 or step == cfg["steps"] - 1:
            print(f"step {step} loss {loss.item():.6f} mean_prob {mean_prob:.6f}")

    print(f"running f1 {meter.f1():.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
