import json
from pathlib import Path

import torch

from .data import make_blobs
from .losses import vit_loss
from .model import TinyViT


def main():
    cfg = json.loads((Path(__file__).resolve().parent / "config.json").read_text())
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"] + 1)
    m, lc, tc, dc = cfg["model"], cfg["loss"], cfg["train"], cfg["data"]

    x_tr, y_tr = make_blobs(dc["n_train"], m["img_size"], dc["noise"], gen)
    x_va, y_va = make_blobs(dc["n_val"], m["img_size"], dc["noise"], gen)

    model = TinyViT(**m)
    opt = torch.optim.AdamW(model.parameters(), lr=tc["lr"], weight_decay=tc["weight_decay"])

    log = []
    for step in range(tc["steps"]):
        idx = torch.randint(0, dc["n_train"], (tc["batch_size"],), generator=gen)
        logits, attn_maps = model(x_tr[idx])
        loss, ce, ent = vit_loss(logits, y_tr[idx], attn_maps, lc["entropy_weight"], lc["eps"])
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append((loss.item(), ce.item(), ent.item()))

    model.eval()
    with torch.no_grad():
        logits, attn_maps = model(x_va)
        acc = (logits.argmax(1) == y_va).float().mean().item()
        ent_val = sum((-(a.clamp(min=1e-8) * a.clamp(min=1e-8).log()).sum(-1)).mean().item()
                      for a in attn_maps) / len(attn_maps)
    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print(f"final_loss {log[-1][0]:.6f} final_ce {log[-1][1]:.6f} final_entropy {log[-1][2]:.6f}")
    print(f"val_acc {acc:.4f} val_attn_entropy {ent_val:.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
