"""Quantization-aware training entry point: ``python -m qatlite.train``."""
import torch
import torch.nn.functional as F

from .config import load_config
from .data import batches, make_dataset
from .modules import QuantMLP


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        acc = (logits.argmax(1) == y).float().mean().item()
        loss = F.cross_entropy(logits, y).item()
    model.train()
    return loss, acc


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    d, m, t = cfg["data"], cfg["model"], cfg["train"]
    x, y = make_dataset(d["n_train"], d["n_features"], d["n_classes"], cfg["seed"])
    model = QuantMLP(d["n_features"], m["hidden"], d["n_classes"], m["weight_bits"],
                     m["act_bits"], m["observer_momentum"])
    opt = torch.optim.Adam(model.parameters(), lr=t["lr"])
    for epoch in range(t["epochs"]):
        running, n = 0.0, 0
        for xb, yb in batches(x, y, d["batch_size"], cfg["seed"] + epoch):
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item() * len(xb)
            n += len(xb)
        ev_loss, ev_acc = evaluate(model, x, y)
        obs = model.act2.observer
        print(f"epoch {epoch} train_loss {running / n:.6f} eval_loss {ev_loss:.6f} "
              f"acc {ev_acc:.4f} act2_range [{obs.min_val.item():.6f}, {obs.max_val.item():.6f}]")
    checksum = sum(p.double().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
