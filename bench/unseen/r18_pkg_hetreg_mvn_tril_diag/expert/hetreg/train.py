import torch

from .config import load_config
from .data import make_loaders
from .model import HeteroscedasticRegressor


def evaluate(model, loader):
    model.eval()
    nll, se, n = 0.0, 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            dist = model(x)
            nll += -dist.log_prob(y).sum().item()
            se += (dist.mean - y).pow(2).sum().item()
            n += x.shape[0]
    model.train()
    return nll / n, se / n


def main():
    cfg = load_config()
    torch.manual_seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    train_loader, val_loader = make_loaders(cfg, g)
    model = HeteroscedasticRegressor(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)

    for epoch in range(cfg.optim.epochs):
        total, n = 0.0, 0
        for x, y in train_loader:
            dist = model(x)
            loss = -dist.log_prob(y).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * x.shape[0]
            n += x.shape[0]
        val_nll, val_mse = evaluate(model, val_loader)
        print(f"epoch {epoch} train_nll {total / n:.5f} val_nll {val_nll:.5f} val_mse {val_mse:.5f}")

    with torch.no_grad():
        x0 = torch.tensor([[2.0, 1.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0]])
        cov = model(x0).covariance_matrix
    print(f"cov[0] diag {cov[0].diagonal().tolist()[0]:.5f} {cov[0].diagonal().tolist()[1]:.5f} "
          f"corr12[1] {(cov[1, 0, 1] / cov[1].diagonal()[:2].prod().sqrt()).item():.5f}")
    print(f"head tril weight norm {model.head.tril.weight.norm():.5f}")


if __name__ == "__main__":
    main()
