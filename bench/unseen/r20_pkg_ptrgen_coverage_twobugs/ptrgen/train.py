from pathlib import Path

import torch
import yaml

from .data import make_copy_task
from .losses import coverage_loss, pointer_nll
from .model import PointerGenerator


def main():
    cfg = yaml.safe_load((Path(__file__).resolve().parent / "config.yaml").read_text())
    torch.manual_seed(cfg["seed"])
    V, n_oov = cfg["vocab"]["size"], cfg["vocab"]["n_oov"]
    src, src_ext, tgt_in, tgt_out = make_copy_task(cfg["data"]["n_examples"], cfg["data"]["src_len"],
                                                   V, n_oov, cfg["seed"] + 1)
    model = PointerGenerator(V, cfg["model"]["emb"], cfg["model"]["hidden"])
    tc = cfg["train"]
    opt = torch.optim.Adam(model.parameters(), lr=tc["lr"])
    g = torch.Generator().manual_seed(cfg["seed"] + 2)

    log = []
    for step in range(tc["steps"]):
        idx = torch.randint(0, src.shape[0], (tc["batch_size"],), generator=g)
        final, attns, covs = model(src[idx], src_ext[idx], n_oov, tgt_in[idx])
        nll = pointer_nll(final, tgt_out[idx])
        cov = coverage_loss(attns, covs, tgt_out[idx])
        loss = nll + tc["cov_weight"] * cov
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tc["max_grad_norm"])
        opt.step()
        log.append((loss.item(), nll.item(), cov.item()))

    with torch.no_grad():
        final, attns, covs = model(src[:64], src_ext[:64], n_oov, tgt_in[:64])
        acc = (final.argmax(-1) == tgt_out[:64]).float().mean().item()
        oov = tgt_out[:64] >= V
        oov_acc = (final.argmax(-1) == tgt_out[:64])[oov].float().mean().item()
    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print(f"final_loss {log[-1][0]:.6f} final_nll {log[-1][1]:.6f} final_cov {log[-1][2]:.6f}")
    print(f"token_acc {acc:.4f} oov_copy_acc {oov_acc:.4f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
