import json
from pathlib import Path

import torch

from .data import decoy_dataset
from .losses import right_for_right_reasons
from .model import MLP


def main():
    cfg = json.loads((Path(__file__).parent / "config.json").read_text())
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    x, y, mask = decoy_dataset(cfg["n_train"], cfg["n_features"], cfg["decoy_dims"], gen)
    model = MLP(cfg["n_features"], cfg["hidden"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    step = 0
    for epoch in range(cfg["epochs"]):
        perm = torch.randperm(cfg["n_train"], generator=gen)
        for i in range(0, cfg["n_train"], cfg["batch"]):
            idx = perm[i:i + cfg["batch"]]
            ce, rr = right_for_right_reasons(model, x[idx], y[idx], mask[idx])
            loss = ce + cfg["l2_grads"] * rr
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 4 == 0:
                print(f"step {step} ce {ce.item():.6f} rr {rr.item():.6f}")
            step += 1
    # test set where the decoy is shuffled: a model that is right for the right reasons ignores it
    xt, yt, _ = decoy_dataset(256, cfg["n_features"], cfg["decoy_dims"], gen)
    xt[:, cfg["decoy_dims"]] = xt[torch.randperm(256, generator=gen)][:, cfg["decoy_dims"]]
    with torch.no_grad():
        acc = (model(xt).argmax(1) == yt).float().mean().item()
    total = sum(p.sum() for p in model.parameters()).item()
    print(f"decoy-shuffled acc {acc:.6f}")
    print(f"checksum {total:.6f}")


if __name__ == "__main__":
    main()
