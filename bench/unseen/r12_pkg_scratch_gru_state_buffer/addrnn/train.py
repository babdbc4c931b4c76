from pathlib import Path

import torch
import torch.nn.functional as F
import yaml

from .data import adding_problem
from .layers import AddingModel


def main():
    cfg = yaml.safe_load(Path(__file__).with_name("config.yaml").read_text())
    torch.manual_seed(cfg["seed"])
    x_tr, y_tr = adding_problem(cfg["train_size"], cfg["seq_len"], cfg["seed"] + 1)
    x_te, y_te = adding_problem(cfg["test_size"], cfg["seq_len"], cfg["seed"] + 2)
    model = AddingModel(cfg["input_size"], cfg["hidden_size"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    print(f"baseline mse (predict 1.0) {F.mse_loss(torch.ones_like(y_te), y_te).item():.5f}")

    g = torch.Generator().manual_seed(cfg["seed"] + 3)
    bs = cfg["batch_size"]
    for epoch in range(1, cfg["epochs"] + 1):
        model.train()
        perm = torch.randperm(cfg["train_size"], generator=g)
        total = 0.0
        for i in range(0, cfg["train_size"], bs):
            idx = perm[i:i + bs]
            loss = F.mse_loss(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
            opt.step()
            total += loss.item() * idx.numel()
        model.eval()
        with torch.no_grad():
            test_mse = F.mse_loss(model(x_te), y_te).item()
        print(f"epoch {epoch} train_mse {total / cfg['train_size']:.5f} test_mse {test_mse:.5f}")


if __name__ == "__main__":
    main()
