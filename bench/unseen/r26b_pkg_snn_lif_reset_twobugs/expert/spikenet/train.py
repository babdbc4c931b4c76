import json
import os

import torch
import torch.nn.functional as F

from .data import batches, make_splits
from .model import SpikingMLP


def load_config():
    with open(os.path.join(os.path.dirname(__file__), "config.json")) as f:
        return json.load(f)


def rate_loss(out_spikes, labels):
    """Cross-entropy applied to the output spikes at every time step (snnTorch's ce_rate_loss)."""
    T = out_spikes.shape[0]
    return sum(F.cross_entropy(out_spikes[t] * 5.0, labels) for t in range(T)) / T


def evaluate(model, spikes, labels, cfg):
    model.eval()
    correct, total_loss, n = 0, 0.0, 0
    with torch.no_grad():
        for x, y in batches(spikes, labels, cfg["batch_size"]):
            model.reset_state()
            out, _ = model(x)
            total_loss += rate_loss(out, y).item() * x.shape[0]
            correct += (out.sum(0).argmax(1) == y).sum().item()
            n += x.shape[0]
    return total_loss / n, correct / n


def train_epoch(model, opt, spikes, labels, cfg):
    model.train()
    total, n, rate = 0.0, 0, 0.0
    for x, y in batches(spikes, labels, cfg["batch_size"]):
        model.reset_state()
        out, hidden_rate = model(x)
        loss = rate_loss(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * x.shape[0]
        rate += hidden_rate.item() * x.shape[0]
        n += x.shape[0]
    return total / n, rate / n


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    (tr_x, tr_y), (va_x, va_y) = make_splits(cfg["n_train"], cfg["n_val"], cfg["n_inputs"],
                                             cfg["n_classes"], cfg["num_steps"], cfg["data_seed"])
    model = SpikingMLP(cfg["n_inputs"], cfg["hidden"], cfg["n_classes"],
                       cfg["beta"], cfg["threshold"], cfg["slope"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        loss, rate = train_epoch(model, opt, tr_x, tr_y, cfg)
        val_loss, val_acc = evaluate(model, va_x, va_y, cfg)
        print(f"epoch {epoch} loss {loss:.6f} hidden_rate {rate:.6f} "
              f"val_loss {val_loss:.6f} val_acc {val_acc:.6f}")
    checksum = sum(p.detach().double().abs().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
