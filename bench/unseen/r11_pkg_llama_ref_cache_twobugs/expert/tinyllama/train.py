import json
from pathlib import Path

import torch
import torch.nn.functional as F

from .data import ModularStreams
from .model import ModelArgs, Transformer


def load_params():
    with open(Path(__file__).with_name("params.json")) as f:
        params = json.load(f)
    train_cfg = params.pop("train")
    return ModelArgs(**params), train_cfg


def main():
    args, cfg = load_params()
    torch.manual_seed(cfg["seed"])
    model = Transformer(args)
    data = ModularStreams(args.vocab_size, seed=cfg["seed"] + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params {n_params} layers {args.n_layers} dim {args.dim}")

    model.train()
    for step in range(1, cfg["steps"] + 1):
        batch = data.batch(cfg["batch_size"], cfg["seq_len"])
        inputs, targets = batch[:, :-1], batch[:, 1:]
        logits = model(inputs, 0)
        loss = F.cross_entropy(logits.reshape(-1, args.vocab_size), targets.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % cfg["log_every"] == 0:
            acc = (logits.argmax(-1) == targets).float().mean().item()
            print(f"step {step:3d} loss {loss.item():.5f} acc {acc:.4f}")

    model.eval()
    with torch.inference_mode():
        val = data.batch(8, cfg["seq_len"])
        val_logits = model(val[:, :-1], 0)
        val_loss = F.cross_entropy(val_logits.reshape(-1, args.vocab_size), val[:, 1:].reshape(-1))
        prompt = val[:2, :8]
        sample = model.generate(prompt, max_new_tokens=8)
    print(f"val loss {val_loss.item():.5f}")
    print("sample", sample[0].tolist())
    checksum = sum(p.detach().double().abs().sum().item() for p in model.parameters())
    print(f"param checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
