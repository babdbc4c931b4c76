"""Entry point: ``python -m gcache.train``."""
from functools import partial
from importlib import resources

import torch
import torch.nn.functional as F
import yaml

from .cache import GradCache
from .data import batch_iter, make_pairs
from .encoders import DualEncoder
from .losses import info_nce


def load_config():
    return yaml.safe_load(resources.files(__package__).joinpath("config.yaml").read_text())


@torch.no_grad()
def recall_at_1(model, q, d):
    qs = F.normalize(model.query(q), dim=-1)
    ds = F.normalize(model.doc(d), dim=-1)
    return (qs @ ds.t()).argmax(1).eq(torch.arange(len(q))).float().mean().item()


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    dc, mc, tc = cfg["data"], cfg["model"], cfg["train"]
    q, d = make_pairs(dc["n_pairs"], dc["dim_in"], dc["noise"], cfg["seed"])
    model = DualEncoder(dc["dim_in"], mc["hidden"], mc["dim_out"])
    opt = torch.optim.AdamW(model.parameters(), lr=tc["lr"], weight_decay=0.01)
    gc = GradCache(model, partial(info_nce, temperature=tc["temperature"]), tc["chunk_size"])

    for step, idx in enumerate(batch_iter(len(q), tc["batch_size"], tc["steps"], cfg["seed"] + 1)):
        opt.zero_grad()
        loss = gc.step(q[idx], d[idx])
        opt.step()
        if step % 4 == 0 or step == tc["steps"] - 1:
            print(f"step {step:2d} loss {loss.item():.6f}")
    print(f"recall@1 {recall_at_1(model, q, d):.4f}")
    checksum = sum(p.double().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
