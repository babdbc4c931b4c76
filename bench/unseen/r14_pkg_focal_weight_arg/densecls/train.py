import torch

from .config import TrainConfig
from .data import make_scenes
from .losses import SigmoidFocalLoss
from .model import CenterNet


def evaluate(model, x, t, threshold=0.3):
    model.eval()
    with torch.no_grad():
        prob = model(x).sigmoid()
    model.train()
    pred = prob > threshold
    tp = (pred & (t > 0)).sum().item()
    precision = tp / max(pred.sum().item(), 1)
    recall = tp / max((t > 0).sum().item(), 1)
    return precision, recall, prob[t > 0].mean().item(), prob[t == 0].mean().item()


def main(argv=None):
    cfg = TrainConfig.from_args(argv)
    gen = torch.Generator().manual_seed(cfg.seed)
    x_tr, t_tr = make_scenes(cfg.n_train, cfg.image_size, cfg.max_objects, cfg.num_classes, gen)
    x_va, t_va = make_scenes(cfg.n_val, cfg.image_size, cfg.max_objects, cfg.num_classes, gen)
    torch.manual_seed(cfg.seed)
    model = CenterNet(cfg.num_classes, cfg.width, cfg.prior_prob)
    criterion = SigmoidFocalLoss(cfg.focal_alpha, cfg.focal_gamma)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(1, cfg.epochs + 1):
        perm = torch.randperm(cfg.n_train, generator=gen)
        losses = []
        for i in range(0, cfg.n_train, cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            loss = criterion(model(x_tr[idx]), t_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        if epoch % 2 == 0:
            prec, rec, p_pos, p_neg = evaluate(model, x_va, t_va)
            print(f"epoch {epoch} focal {sum(losses) / len(losses):.4f} precision {prec:.4f} recall {rec:.4f} "
                  f"p_pos {p_pos:.4f} p_neg {p_neg:.5f}")
    print(f"checksum {sum(p.abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
