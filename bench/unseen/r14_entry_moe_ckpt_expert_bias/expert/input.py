import os

import torch
import torch.nn.functional as F
import yaml

from moelm import MoELM, markov_chain, markov_sequences

HERE = os.path.dirname(os.path.abspath(__file__))


def lm_loss(model, seqs):
    logits = model(seqs[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), seqs[:, 1:].reshape(-1))


def main():
    with open(os.path.join(HERE, "train.yaml")) as f:
        cfg = yaml.safe_load(f)
    d, m, t = cfg["data"], cfg["model"], cfg["train"]
    gen = torch.Generator().manual_seed(cfg["seed"])
    trans = markov_chain(d["vocab"], gen)
    train = markov_sequences(trans, d["n_train_seqs"], d["seq_len"], gen)
    evals = markov_sequences(trans, d["n_eval_seqs"], d["seq_len"], gen)

    torch.manual_seed(cfg["seed"])
    model = MoELM(d["vocab"], d["seq_len"], **m)
    opt = torch.optim.AdamW(model.parameters(), lr=t["lr"], weight_decay=0.01)

    for step in range(1, t["steps"] + 1):
        idx = torch.randint(0, d["n_train_seqs"], (t["batch_size"],), generator=gen)
        loss = lm_loss(model, train[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        for blk in model.blocks:
            blk.moe.update_expert_bias()
        if step % t["log_every"] == 0:
            loads = " ".join(
                "/".join(str(int(c)) for c in blk.moe.tokens_per_expert.tolist()) for blk in model.blocks)
            print(f"step {step} loss {loss.item():.4f} load {loads}")

    model.eval()
    with torch.no_grad():
        ev = lm_loss(model, evals).item()
    bias = " ".join(f"{v:.3f}" for v in model.blocks[0].moe.expert_bias.tolist())
    print(f"eval_loss {ev:.4f} layer0_expert_bias {bias}")
    print(f"checksum {sum(p.abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
