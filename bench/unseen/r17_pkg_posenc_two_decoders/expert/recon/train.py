import torch
import torch.nn.functional as F

from .config import TrainConfig
from .model import TwoHeadAutoencoder


def make_batch(cfg, gen):
    base = torch.randn(cfg.batch_size, 1, cfg.d_in, generator=gen)
    drift = 0.3 * torch.randn(cfg.batch_size, cfg.n_tokens, cfg.d_in, generator=gen).cumsum(1)
    x = base + drift
    # auxiliary target: how much each token moved relative to the previous one
    step = torch.zeros(cfg.batch_size, cfg.n_tokens)
    step[:, 1:] = (x[:, 1:] - x[:, :-1]).norm(dim=-1)
    return x, step


def main(cfg=TrainConfig()):
    torch.manual_seed(cfg.seed)
    model = TwoHeadAutoencoder(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    for step in range(1, cfg.steps + 1):
        x, step_target = make_batch(cfg, gen)
        rec, aux = model(x)
        loss_rec = F.mse_loss(rec, x)
        loss_aux = F.mse_loss(aux, step_target)
        loss = loss_rec + cfg.aux_weight * loss_aux
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % cfg.log_every == 0:
            print(f"step {step} rec {loss_rec.item():.5f} aux {loss_aux.item():.5f}")


if __name__ == "__main__":
    main()
