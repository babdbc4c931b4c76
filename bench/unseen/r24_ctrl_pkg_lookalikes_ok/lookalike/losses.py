import torch
import torch.nn.functional as F


def smoothed_ce(logits, target, eps):
    logp = F.log_softmax(logits, dim=-1)
    valid = target >= 0
    logp = logp.masked_fill(~valid[:, None], 0.0)
    nll = -logp.gather(1, target.clamp(min=0)[:, None]).squeeze(1)
    per_row = (1 - eps) * nll + eps * (-logp.mean(-1))
    return per_row.sum() / valid.sum().clamp(min=1)


def nb_nll(counts, mean, theta, eps=1e-8):
    t1 = torch.lgamma(theta + eps) + torch.lgamma(counts + 1) - torch.lgamma(counts + theta + eps)
    t2 = (theta + counts) * torch.log1p(mean / (theta + eps)) + counts * (torch.log(theta + eps) - torch.log(mean + eps))
    return (t1 + t2).mean()


def input_jacobian_penalty(model, ids, num):
    num = num.clone().requires_grad_(True)
    logits, _, _ = model(ids, num)
    g, = torch.autograd.grad(logits.logsumexp(1).sum(), num, create_graph=True)
    return g.pow(2).sum(1).mean()


class RunningMean:
    def __init__(self, momentum):
        self.momentum, self.value = momentum, None

    def update(self, x):
        x = x.detach()
        self.value = x if self.value is None else self.momentum * self.value + (1 - self.momentum) * x

    def compute(self):
        return self.value
