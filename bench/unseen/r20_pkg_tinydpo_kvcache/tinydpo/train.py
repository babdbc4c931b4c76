import copy
from pathlib import Path

import torch
import yaml

from .data import make_preference_pairs
from .losses import dpo_loss, sequence_logps
from .model import ModelArgs, Transformer


def load_config():
    with open(Path(__file__).resolve().parent / "config.yaml") as f:
        return yaml.safe_load(f)


def main():
    cfg = load_config()
    tcfg, dcfg = cfg["train"], cfg["data"]
    torch.manual_seed(tcfg["seed"])

    args = ModelArgs(**cfg["model"])
    policy = Transformer(args)
    reference = copy.deepcopy(policy).eval()
    for p in reference.parameters():
        p.requires_grad_(False)

    chosen, rejected, mask = make_preference_pairs(args.vocab_size, dcfg["n_pairs"], dcfg["prompt_len"],
                                                   dcfg["response_len"], tcfg["seed"] + 1)
    opt = torch.optim.AdamW(policy.parameters(), lr=tcfg["lr"], weight_decay=0.0)
    g = torch.Generator().manual_seed(tcfg["seed"] + 2)

    hist = []
    for step in range(tcfg["steps"]):
        idx = torch.randperm(chosen.shape[0], generator=g)[: tcfg["batch_size"]]
        c, r, m = chosen[idx], rejected[idx], mask[idx]

        pol_c = sequence_logps(policy(c), c, m)
        pol_r = sequence_logps(policy(r), r, m)
        with torch.no_grad():
            ref_c = sequence_logps(reference(c), c, m)
            ref_r = sequence_logps(reference(r), r, m)

        loss, rc, rr = dpo_loss(pol_c, pol_r, ref_c, ref_r, tcfg["beta"])
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append((loss.item(), (rc - rr).mean().item(), (rc > rr).float().mean().item()))

    sample = policy.generate(cfg["generate"]["prompt"], cfg["generate"]["max_new_tokens"])
    checksum = sum(p.double().abs().sum().item() for p in policy.parameters())
    print(f"first_loss {hist[0][0]:.6f}")
    print(f"final_loss {hist[-1][0]:.6f}")
    print(f"final_reward_margin {hist[-1][1]:.6f}")
    print(f"final_reward_acc {hist[-1][2]:.4f}")
    print("greedy_sample", sample)
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
