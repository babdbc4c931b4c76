import math
from pathlib import Path

import torch
import yaml

from .losses import critic_loss, generator_loss
from .model import Critic, Generator


def sample_real(n, gen):
    k = torch.randint(0, 8, (n,), generator=gen).float()
    centers = torch.stack([torch.cos(2 * math.pi * k / 8), torch.sin(2 * math.pi * k / 8)], 1) * 2.0
    return centers + 0.05 * torch.randn(n, 2, generator=gen)


def main():
    cfg = yaml.safe_load((Path(__file__).parent / "config.yaml").read_text())
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    G = Generator(cfg["z_dim"], cfg["hidden"])
    D = Critic(cfg["hidden"], cfg["n_blocks"], cfg["grad_checkpointing"])
    opt_g = torch.optim.Adam(G.parameters(), lr=cfg["lr"], betas=tuple(cfg["betas"]))
    opt_d = torch.optim.Adam(D.parameters(), lr=cfg["lr"], betas=tuple(cfg["betas"]))
    for step in range(cfg["steps"]):
        for _ in range(cfg["n_critic"]):
            real = sample_real(cfg["batch"], gen)
            fake = G(torch.randn(cfg["batch"], cfg["z_dim"], generator=gen)).detach()
            opt_d.zero_grad()
            d_loss, wdist = critic_loss(D, real, fake, cfg["gp_weight"])
            d_loss.backward()
            opt_d.step()
        opt_g.zero_grad()
        g_loss = generator_loss(D, G(torch.randn(cfg["batch"], cfg["z_dim"], generator=gen)))
        g_loss.backward()
        opt_g.step()
        if step % 4 == 0 or step == cfg["steps"] - 1:
            print(f"step {step} d_loss {d_loss.item():.6f} wdist {wdist.item():.6f} g_loss {g_loss.item():.6f}")
    g_sum = sum(p.sum() for p in G.parameters()).item()
    d_sum = sum(p.sum() for p in D.parameters()).item()
    print(f"checksum G {g_sum:.6f} D {d_sum:.6f}")


if __name__ == "__main__":
    main()
