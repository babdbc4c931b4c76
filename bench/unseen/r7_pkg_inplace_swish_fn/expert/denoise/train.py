"""Residual gated-MLP denoiser for 1-D signals. Run from the project root:
python -m denoise.train"""
import torch
import torch.nn.functional as F

from .config import TrainConfig
from .data import make_signals
from .model import Denoiser


def main(cfg: TrainConfig = TrainConfig()):
    torch.manual_seed(cfg.seed)
    x_tr, y_tr = make_signals(cfg.n_train, cfg.signal_len, cfg.noise_std, seed=1)
    x_va, y_va = make_signals(cfg.n_val, cfg.signal_len, cfg.noise_std, seed=2)
    model = Denoiser(cfg.signal_len, cfg.width, cfg.n_blocks)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    print(f"noisy val mse {F.mse_loss(x_va, y_va):.4f}")
    for epoch in range(cfg.epochs):
        model.train()
        perm = torch.randperm(cfg.n_train)
        running = 0.0
        for i in range(0, cfg.n_train, cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            loss = F.mse_loss(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item() * len(idx)
        model.eval()
        with torch.no_grad():
            val = F.mse_loss(model(x_va), y_va).item()
        print(f"epoch {epoch} train_mse {running / cfg.n_train:.4f} val_mse {val:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
