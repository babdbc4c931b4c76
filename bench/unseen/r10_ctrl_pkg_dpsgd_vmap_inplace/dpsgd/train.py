"""python -m dpsgd.train [--epochs N] [--noise-multiplier S]"""
import torch
import torch.nn.functional as F

from .config import parse_config
from .data import tabular
from .model import MultiBranchMLP
from .privacy import per_sample_grads, privatize


@torch.no_grad()
def evaluate(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg.seed)
    x_tr, y_tr = tabular(cfg.n_train, cfg.in_dim, gen)
    x_va, y_va = tabular(cfg.n_val, cfg.in_dim, gen)
    model = MultiBranchMLP(cfg.in_dim, cfg.hidden, cfg.n_blocks)
    print("initial val loss {:.5f} acc {:.4f}".format(*evaluate(model, x_va, y_va)))

    for epoch in range(cfg.epochs):
        perm = torch.randperm(cfg.n_train, generator=gen)
        clipped_frac = []
        for idx in perm.split(cfg.batch_size):
            params = {k: v.detach() for k, v in model.named_parameters()}
            grads = per_sample_grads(model, params, x_tr[idx], y_tr[idx])
            noisy, frac = privatize(grads, cfg.clip_norm, cfg.noise_multiplier, gen)
            with torch.no_grad():
                for name, p in model.named_parameters():
                    p -= cfg.lr * noisy[name]
            clipped_frac.append(frac)
        loss, acc = evaluate(model, x_va, y_va)
        print(f"epoch {epoch} val_loss {loss:.5f} val_acc {acc:.4f} "
              f"clipped {sum(clipped_frac) / len(clipped_frac):.3f}")


if __name__ == "__main__":
    main()
