import os

import torch
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset

from .model import QResMLP
from .utils import accuracy, checksum, make_data, save_checkpoint


def main():
    with open(os.path.join(os.path.dirname(__file__), "config.yaml")) as f:
        cfg = yaml.safe_load(f)
    dc, mc, tc = cfg["data"], cfg["model"], cfg["train"]
    torch.manual_seed(tc["seed"])
    x, y = make_data(dc["n_train"], dc["n_features"], dc["n_classes"], dc["seed"])
    loader = DataLoader(TensorDataset(x, y), batch_size=tc["batch_size"], shuffle=True,
                        generator=torch.Generator().manual_seed(tc["seed"]))
    model = QResMLP(dc["n_features"], dc["n_classes"], mc["width"], mc["act_bits"], mc["alpha_init"])
    alpha_ids = {id(a) for a in model.alphas()}
    params = [
        {"params": [p for p in model.parameters() if id(p) not in alpha_ids], "weight_decay": tc["weight_decay"]},
        {"params": model.alphas(), "weight_decay": tc["alpha_decay"]},
    ]
    opt = torch.optim.SGD(params, lr=tc["lr"], momentum=tc["momentum"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=tc["epochs"] * len(loader))
    step = 0
    for epoch in range(tc["epochs"]):
        model.train()
        for xb, yb in loader:
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), tc["clip_norm"])
            opt.step()
            sched.step()
            log = {"epoch": epoch, "step": step, "loss": loss.item(), "acc": accuracy(logits, yb)}
            print("epoch {epoch} step {step:3d} loss {loss:.6f} acc {acc:.3f}".format(**log))
            step += 1
        save_checkpoint(model, opt, epoch, tc["out_dir"])
    print("alphas", " ".join(f"{a.item():.4f}" for a in model.alphas()))
    print(f"checksum {checksum(model):.6f}")


if __name__ == "__main__":
    main()
