"""Pretrain a tiny char-level GPT on a copy task, then adapt it with LoRA to a shifted-copy task
(base weights frozen, activation checkpointing on, loralib-style merge for evaluation)."""
import argparse
import json
from pathlib import Path

import torch
import torch.nn.functional as F

from chargpt import GPT, GPTConfig, inject_lora, lora_parameters
from chargpt.data import copy_task


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        logits, loss = model(x, y)
    mask = y != -100
    acc = (logits.argmax(-1)[mask] == y[mask]).float().mean().item()
    model.train()
    return loss.item(), acc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(Path(__file__).resolve().parent / "config.json"))
    cfg = json.load(open(parser.parse_args().config))
    torch.manual_seed(cfg["seed"])
    g = torch.Generator().manual_seed(cfg["seed"])
    mcfg = GPTConfig(**cfg["model"])
    model = GPT(mcfg)

    # ---- phase 1: full pretraining on the plain copy task ----
    pc = cfg["pretrain"]
    opt = torch.optim.AdamW(model.parameters(), lr=pc["lr"], weight_decay=0.0)
    xv, yv = copy_task(256, mcfg.block_size, mcfg.vocab_size, g, pc["offset"])
    for step in range(pc["steps"]):
        x, y = copy_task(pc["batch_size"], mcfg.block_size, mcfg.vocab_size, g, pc["offset"])
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    vl, va = evaluate(model, xv, yv)
    print(f"pretrain val loss {vl:.5f} acc {va:.4f}")

    # ---- phase 2: LoRA adaptation to the shifted copy task ----
    fc = cfg["finetune"]
    for p in model.parameters():
        p.requires_grad_(False)
    inject_lora(model, r=fc["lora_r"], alpha=fc["lora_alpha"])
    params = lora_parameters(model)
    print(f"lora params {sum(p.numel() for p in params)}")
    opt = torch.optim.AdamW(params, lr=fc["lr"], weight_decay=0.0)
    xv, yv = copy_task(256, mcfg.block_size, mcfg.vocab_size, g, fc["offset"])
    vl, va = evaluate(model, xv, yv)
    print(f"step   0 val loss {vl:.5f} acc {va:.4f}")
    for step in range(1, fc["steps"] + 1):
        x, y = copy_task(fc["batch_size"], mcfg.block_size, mcfg.vocab_size, g, fc["offset"])
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % fc["eval_every"] == 0:
            vl, va = evaluate(model, xv, yv)
            print(f"step {step:3d} train loss {loss.item():.5f} val loss {vl:.5f} acc {va:.4f}")
    checksum = sum(p.detach().double().abs().sum().item() for p in params)
    print(f"lora checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
