import torch

from .config import load
from .data import make_tracks, standardise_
from .model import TrajectoryMDN


def main():
    cfg = load()
    torch.manual_seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    hist, target = make_tracks(cfg, g)
    scale = standardise_(hist, target)
    n_train = int(0.8 * cfg.n_tracks)
    model = TrajectoryMDN(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    print(f"step scale {scale:.5f}")
    for epoch in range(cfg.epochs):
        perm = torch.randperm(n_train, generator=g)
        tot = 0.0
        for i in range(0, n_train, cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            nll = -model(hist[idx]).log_prob(target[idx]).mean()
            opt.zero_grad()
            nll.backward()
            opt.step()
            tot += nll.item() * len(idx)
        with torch.no_grad():
            val = -model(hist[n_train:]).log_prob(target[n_train:]).mean().item()
        print(f"epoch {epoch} train_nll {tot / n_train:.5f} val_nll {val:.5f}")
    with torch.no_grad():
        mix = model(hist[n_train:n_train + 1])
        w = mix.mixture_distribution.probs[0]
    print("mixture weights " + " ".join(f"{v:.5f}" for v in w.tolist()))


if __name__ == "__main__":
    main()
