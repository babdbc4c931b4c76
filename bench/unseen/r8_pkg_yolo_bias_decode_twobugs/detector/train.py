"""Toy single-object YOLO-style detector. Run from the project root:
python -m detector.train [--epochs N] [--lr LR]"""
import argparse
from pathlib import Path

import torch
import yaml

from .data import batches, make_images
from .losses import box_iou_xywh, detection_loss
from .model import TinyYolo


def load_config():
    cfg = yaml.safe_load(Path(__file__).with_name("defaults.yaml").read_text())
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=cfg["epochs"])
    p.add_argument("--lr", type=float, default=cfg["lr"])
    cfg.update(vars(p.parse_args()))
    return cfg


@torch.no_grad()
def evaluate(model, imgs, boxes):
    model.eval()
    pred = model(imgs).flatten(1, 3)                                   # [n, na*ny*nx, 5]
    best = pred[torch.arange(len(imgs)), pred[..., 4].argmax(1)]
    return box_iou_xywh(best[:, :4], boxes).mean().item()


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    train_x, train_b = make_images(cfg["n_train"], cfg["img_size"], seed=1)
    val_x, val_b = make_images(cfg["n_val"], cfg["img_size"], seed=2)
    model = TinyYolo(cfg["anchors"], cfg["stride"], cfg["img_size"])
    anchors = torch.tensor(cfg["anchors"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    for epoch in range(cfg["epochs"]):
        model.train()
        tot = box_tot = obj_tot = 0.0
        n = 0
        for imgs, boxes in batches(train_x, train_b, cfg["batch_size"], gen):
            pred = model(imgs)
            loss, box_loss, obj_loss = detection_loss(pred, boxes, anchors, cfg["stride"],
                                                      cfg["obj_weight"], cfg["box_weight"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot, box_tot, obj_tot, n = tot + loss.item(), box_tot + box_loss.item(), obj_tot + obj_loss.item(), n + 1
        print(f"epoch {epoch} loss {tot / n:.5f} box {box_tot / n:.5f} obj {obj_tot / n:.5f} "
              f"val_iou {evaluate(model, val_x, val_b):.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
