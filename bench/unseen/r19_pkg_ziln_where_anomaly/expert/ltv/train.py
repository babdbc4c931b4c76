import argparse

import torch

from .config import Config
from .data import make_customers, split
from .losses import zero_inflated_lognormal_loss, zero_inflated_lognormal_pred
from .model import LTVNet


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        pred = zero_inflated_lognormal_pred(logits)
        ret_acc = ((torch.sigmoid(logits[:, 0]) > 0.5) == (y > 0)).float().mean().item()
        mae = (pred - y).abs().mean().item()
    model.train()
    return ret_acc, mae, pred.mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=Config.epochs)
    ap.add_argument("--lr", type=float, default=Config.lr)
    args = ap.parse_args()
    cfg = Config(epochs=args.epochs, lr=args.lr)

    torch.autograd.set_detect_anomaly(cfg.detect_anomaly)
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    x, y = make_customers(cfg.n_customers, cfg.n_features, gen)
    (x_tr, y_tr), (x_va, y_va) = split(x, y, 512)

    model = LTVNet(cfg.n_features, cfg.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    for epoch in range(1, cfg.epochs + 1):
        perm = torch.randperm(x_tr.size(0), generator=gen)
        total, nb = 0.0, 0
        for i in range(0, x_tr.size(0), cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            loss = zero_inflated_lognormal_loss(y_tr[idx], model(x_tr[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            nb += 1
        ret_acc, mae, mean_pred = evaluate(model, x_va, y_va)
        print(f"epoch {epoch}  ziln_loss {total / nb:.5f}  return_acc {ret_acc:.5f}  "
              f"val_mae {mae:.5f}  mean_pred {mean_pred:.5f}")

    print(f"final  true_mean {y_va.mean().item():.5f}  out_weight_norm {model.out.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
