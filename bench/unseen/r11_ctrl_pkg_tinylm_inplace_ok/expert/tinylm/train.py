import copy

import torch
import torch.nn.functional as F

from .config import parse_config
from .data import batch
from .model import PromptLM


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    model = PromptLM(cfg)
    ema = copy.deepcopy(model).eval()          # before any forward; parametrized weight_norm deep-copies fine
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    P = cfg.prompt_len

    for step in range(1, cfg.steps + 1):
        model.train()
        x, y = batch(cfg, g)
        logits = model(x)
        ce = F.cross_entropy(logits[:, P - 1:].reshape(-1, cfg.vocab_size), y[:, P - 1:].reshape(-1))
        z = torch.logsumexp(logits, dim=-1).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        # two backward passes through one graph: retain it for the second, nothing is modified in between
        (cfg.z_loss_weight * z).backward(retain_graph=True)
        ce.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        model.steps_seen += 1

        with torch.no_grad():                  # EMA after the step, in place
            for pe, p in zip(ema.parameters(), model.parameters()):
                pe.mul_(cfg.ema_decay).add_(p, alpha=1 - cfg.ema_decay)

        if step % cfg.log_every == 0:
            with torch.no_grad():
                xv, yv = batch(cfg, torch.Generator().manual_seed(999))
                lv = ema(xv)
                ema_ce = F.cross_entropy(lv[:, P - 1:].reshape(-1, cfg.vocab_size), yv[:, P - 1:].reshape(-1))
            print(f"step {step:3d} ce {ce.item():.5f} z {z.item():.4f} ema_ce {ema_ce.item():.5f}")

    model.eval()
    x, _ = batch(cfg, torch.Generator().manual_seed(7))
    sample = model.generate(x[:2, : P + 6], new_tokens=6)
    print("sample", sample[0, P:].tolist())
    print(f"steps_seen {int(model.steps_seen)} ema checksum "
          f"{sum(p.double().abs().sum().item() for p in ema.parameters()):.4f}")


if __name__ == "__main__":
    main()
