import torch
import torch.nn.functional as F

from .data import augment


@torch.no_grad()   # guessed labels are targets: no gradient through them (MixMatch, Sec. 3.2)
def guess_labels(model, u, K, T, gen):
    """Average the predictions over K augmentations of u, then sharpen (MixMatch Alg. 1, l.7-8)."""
    u_augs = [augment(u, gen) for _ in range(K)]
    probs = F.softmax(model(u_augs[0]), dim=1)
    for ua in u_augs[1:]:
        probs += F.softmax(model(ua), dim=1)
    probs /= K
    sharpened = probs.pow(1.0 / T)
    return u_augs, sharpened / sharpened.sum(dim=1, keepdim=True)


def mixup(x, p, alpha, gen):
    lam = torch.distributions.Beta(alpha, alpha).sample().item() if alpha > 0 else 1.0
    lam = max(lam, 1 - lam)
    perm = torch.randperm(x.size(0), generator=gen)
    return lam * x + (1 - lam) * x[perm], lam * p + (1 - lam) * p[perm]


def mixmatch_losses(model, x, y, u, cfg, gen):
    mm = cfg["mixmatch"]
    x_aug = augment(x, gen)
    y_onehot = F.one_hot(y, 2).float()
    u_augs, q = guess_labels(model, u, mm["K"], mm["T"], gen)
    all_x = torch.cat([x_aug] + u_augs)
    all_p = torch.cat([y_onehot] + [q] * mm["K"])
    mixed_x, mixed_p = mixup(all_x, all_p, mm["alpha"], gen)
    logits = model(mixed_x)
    n = x.size(0)
    loss_x = -(mixed_p[:n] * F.log_softmax(logits[:n], dim=1)).sum(1).mean()
    loss_u = F.mse_loss(F.softmax(logits[n:], dim=1), mixed_p[n:])
    return loss_x, loss_u
