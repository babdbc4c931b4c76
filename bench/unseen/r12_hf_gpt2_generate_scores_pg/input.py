"""REINFORCE fine-tuning of a (tiny, randomly initialised) GPT-2 policy.

The policy samples continuations with ``model.generate``; the reward counts how many sampled
tokens fall in a target set; the loss is -(R - baseline) * log pi(sampled tokens).
"""
import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging as hf_logging


def reward_fn(tokens, good):
    return torch.isin(tokens, good).float().mean(dim=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--gen-len", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--baseline-momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    hf_logging.set_verbosity_error()
    torch.manual_seed(args.seed)
    cfg = GPT2Config(vocab_size=16, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                     bos_token_id=0, eos_token_id=None, pad_token_id=0)
    model = GPT2LMHeadModel(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    good = torch.tensor([2, 3, 4, 5])
    prompt = torch.zeros(args.batch_size, 1, dtype=torch.long)       # <bos>
    baseline = None

    for step in range(1, args.steps + 1):
        model.train()
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=True,
                             top_k=0, max_new_tokens=args.gen_len, output_scores=True,
                             return_dict_in_generate=True)
        gen = out.sequences[:, prompt.size(1):]                       # (B, L)
        reward = reward_fn(gen, good)
        baseline = reward.mean() if baseline is None else \
            args.baseline_momentum * baseline + (1 - args.baseline_momentum) * reward.mean()

        logits = torch.stack(out.scores, dim=1)                       # (B, L, V)
        logp = logits.log_softmax(-1).gather(-1, gen.unsqueeze(-1)).squeeze(-1).sum(-1)
        loss = -((reward - baseline) * logp).mean()

        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 5 == 0:
            print(f"step {step:3d} reward {reward.mean().item():.4f} baseline {baseline.item():.4f} "
                  f"loss {loss.item():.5f} logp {logp.mean().item():.4f}")

    model.eval()
    with torch.no_grad():
        probs = model(prompt[:1]).logits[0, -1].softmax(-1)
    print(f"p(good | bos) {probs[good].sum().item():.4f}")


if __name__ == "__main__":
    main()
