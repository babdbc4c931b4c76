import argparse

import torch
import torch.nn.functional as F

from .config import TrainConfig
from .data import batches, make_split
from .model import DenseNet


def evaluate(model, images, labels, batch_size):
    model.eval()
    correct = 0
    loss = 0.0
    with torch.no_grad():
        for x, y in batches(images, labels, batch_size):
            logits = model(x)
            loss += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(1) == y).sum().item()
    return loss / images.size(0), correct / images.size(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    ap.add_argument("--lr", type=float, default=TrainConfig.lr)
    cfg = TrainConfig(**vars(ap.parse_args()))

    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    x_tr, y_tr = make_split(cfg.n_train, cfg.image_size, cfg.num_classes, gen)
    x_va, y_va = make_split(cfg.n_val, cfg.image_size, cfg.num_classes, gen)

    model = DenseNet(cfg.growth_rate, cfg.block_config, cfg.num_init_features,
                     cfg.bn_size, cfg.num_classes)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum,
                          weight_decay=cfg.weight_decay, nesterov=True)

    for epoch in range(1, cfg.epochs + 1):
        model.train()
        total, n = 0.0, 0
        for x, y in batches(x_tr, y_tr, cfg.batch_size, gen):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * x.size(0)
            n += x.size(0)
        val_loss, val_acc = evaluate(model, x_va, y_va, 64)
        print(f"epoch {epoch}  train_loss {total / n:.5f}  val_loss {val_loss:.5f}  val_acc {val_acc:.5f}")

    stem_norm = model.stem.weight.norm().item()
    total_norm = torch.sqrt(sum(p.detach().pow(2).sum() for p in model.parameters())).item()
    print(f"final  stem_weight_norm {stem_norm:.5f}  param_norm {total_norm:.5f}")


if __name__ == "__main__":
    main()
