import copy

import torch


class GroupWeights(torch.nn.Module):
    """Group-DRO style weights over data groups, updated after each optimiser step."""

    def __init__(self, n_groups, eta):
        super().__init__()
        self.eta = eta
        self.register_buffer("w", torch.full((n_groups,), 1.0 / n_groups))

    def weighted(self, per_example, groups):
        sums = torch.zeros(self.w.shape[0]).index_add_(0, groups, per_example)
        counts = torch.zeros(self.w.shape[0]).index_add_(0, groups, torch.ones_like(per_example))
        group_loss = sums / counts.clamp(min=1)
        return (self.w * group_loss).sum(), group_loss

    @torch.no_grad()
    def update(self, group_loss):
        self.w.mul_(torch.exp(self.eta * group_loss.detach()))
        self.w.div_(self.w.sum())


class EMA:
    def __init__(self, model, decay):
        self.decay = decay
        self.shadow = copy.deepcopy(model).requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        for ps, p in zip(self.shadow.parameters(), model.parameters()):
            ps.lerp_(p, 1 - self.decay)
        for bs, b in zip(self.shadow.buffers(), model.buffers()):
            bs.copy_(b)


def diversity_penalty(features, eps=1e-3):
    """-logdet of the feature Gram matrix (encourages spread-out conditioning features)."""
    K = features.T @ features / features.shape[0]
    K.diagonal().add_(eps)
    return -torch.logdet(K)
