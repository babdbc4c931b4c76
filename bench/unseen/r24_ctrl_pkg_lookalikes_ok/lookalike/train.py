import os

import torch
import torch.nn as nn
import yaml
from torch.utils.data import DataLoader, TensorDataset

from .losses import RunningMean, input_jacobian_penalty, nb_nll, smoothed_ce
from .model import HybridNet


def make_data(dc):
    g = torch.Generator().manual_seed(dc["seed"])
    ids = torch.randint(0, dc["n_entities"], (dc["n"],), generator=g)
    num = torch.randn(dc["n"], dc["n_numeric"], generator=g)
    w = torch.randn(dc["n_numeric"], dc["n_classes"], generator=g)
    y = (num @ w + 0.5 * torch.randn(dc["n"], dc["n_classes"], generator=g)).argmax(1)
    y[torch.rand(dc["n"], generator=g) < dc["unlabeled_ratio"]] = -1
    rate = torch.exp(0.5 * num[:, 0] + 0.3 * (ids % 3).float())
    counts = torch.poisson(rate, generator=g)
    return ids, num, y, counts


def clip_rates_(pred, lo, hi):
    # per-sample bounds written by index (no iteration over the tensor itself)
    for i in range(pred.shape[0]):
        pred[i].clamp_(lo[i].item(), hi[i].item())
    return pred


@torch.no_grad()
def evaluate(model, ids, num, y):
    model.eval()
    logits, _, _ = model(ids, num)
    lab = y >= 0
    return (logits.argmax(1)[lab] == y[lab]).float().mean().item()


def main():
    with open(os.path.join(os.path.dirname(__file__), "config.yaml")) as f:
        cfg = yaml.safe_load(f)
    dc, mc, lc, tc = cfg["data"], cfg["model"], cfg["loss"], cfg["train"]
    torch.manual_seed(tc["seed"])
    ids, num, y, counts = make_data(dc)
    loader = DataLoader(TensorDataset(ids, num, y, counts), batch_size=tc["batch_size"], shuffle=True,
                        generator=torch.Generator().manual_seed(tc["seed"] + 1))
    model = HybridNet(dc["n_entities"], dc["n_numeric"], dc["n_classes"], mc["dim"], mc["hidden"], mc["act_bits"])
    with torch.no_grad():
        model.table.renorm_()
        nn.init.eye_(model.blocks[0].fc.weight)
    opt = torch.optim.Adam(model.parameters(), lr=tc["lr"])
    meters = {k: RunningMean(lc["meter_momentum"]) for k in ("cls", "nb")}
    step = 0
    for epoch in range(tc["epochs"]):
        model.train()
        for b_ids, b_num, b_y, b_counts in loader:
            logits, mean, theta = model(b_ids, b_num)
            bounds = torch.stack([mean.detach() * 0 + 1e-3, mean.detach() * 0 + 50.0], 1)
            rates = torch.stack([mean, mean * 1.0], 1)
            rates = clip_rates_(rates, bounds[:, 0], bounds[:, 1])
            losses = {"cls": smoothed_ce(logits, b_y, lc["smoothing"]), "nb": nb_nll(b_counts, rates[:, 0], theta)}
            for k, v in losses.items():
                meters[k].update(v)
            weights = {k: 1.0 / (meters[k].compute() + 1e-8) for k in losses}
            total = sum(weights[k] * v for k, v in losses.items())
            total = total + lc["jac_weight"] * input_jacobian_penalty(model, b_ids, b_num)
            opt.zero_grad()
            total.backward()
            nn.utils.clip_grad_norm_(model.parameters(), tc["clip"])
            opt.step()
            model.post_parameter_update()
            with torch.no_grad():
                model.table.renorm_()
            seen = 0.0
            for row in b_num:                   # read-only iteration over unbind views
                seen += row.abs().sum().item()
            print(f"epoch {epoch} step {step:3d} total {total.item():.6f} cls {losses['cls'].item():.6f} "
                  f"nb {losses['nb'].item():.6f} |x| {seen / len(b_num):.3f}")
            step += 1
        print(f"epoch {epoch} acc {evaluate(model, ids, num, y):.4f}")
    os.makedirs(tc["out_dir"], exist_ok=True)
    torch.save(model.state_dict(), os.path.join(tc["out_dir"], "hybrid.pt"))
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
