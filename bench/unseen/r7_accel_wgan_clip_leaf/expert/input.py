"""WGAN (weight clipping) on a 1-D bimodal distribution, trained with Hugging Face accelerate.
Run: python input.py"""
import warnings

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset

from models import Critic, Generator
from wgan import critic_step, generator_step

warnings.filterwarnings("ignore")

LATENT, N_CRITIC, CLIP, EPOCHS, BATCH = 4, 3, 0.1, 6, 64


def make_data(n=1536, seed=1):
    g = torch.Generator().manual_seed(seed)
    mode = (torch.rand(n, 1, generator=g) < 0.3).float()
    return mode * (2.0 + 0.3 * torch.randn(n, 1, generator=g)) + (1 - mode) * (-1.0 + 0.5 * torch.randn(n, 1, generator=g))


def main():
    set_seed(0)
    accelerator = Accelerator(cpu=True)
    G, D = Generator(LATENT), Critic()
    opt_g = torch.optim.RMSprop(G.parameters(), lr=1e-3)
    opt_d = torch.optim.RMSprop(D.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(make_data()), batch_size=BATCH, shuffle=True, drop_last=True)
    G, D, opt_g, opt_d, loader = accelerator.prepare(G, D, opt_g, opt_d, loader)

    for epoch in range(EPOCHS):
        w_est, g_losses = [], []
        for i, (real,) in enumerate(loader):
            w_est.append(critic_step(accelerator, G, D, opt_d, real, LATENT, CLIP))
            if (i + 1) % N_CRITIC == 0:
                g_losses.append(generator_step(accelerator, G, D, opt_g, BATCH, LATENT, accelerator.device))
        print(f"epoch {epoch} wasserstein {sum(w_est) / len(w_est):.4f} g_loss {sum(g_losses) / len(g_losses):.4f}")

    with torch.no_grad():
        torch.manual_seed(99)
        s = G(torch.randn(4000, LATENT))
    print(f"samples mean {s.mean():.4f} std {s.std():.4f} frac>0.5 {(s > 0.5).float().mean():.4f} (data: -0.11, 1.44, 0.30)")
    print(f"critic max |w| {max(p.abs().max().item() for p in D.parameters()):.4f}")
    print(f"checksum G {sum(p.abs().sum() for p in G.parameters()):.4f} D {sum(p.abs().sum() for p in D.parameters()):.4f}")


if __name__ == "__main__":
    main()
