import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, params, x, y):
    """One gradient per example: vmap over the batch of grad() of a single-example loss."""

    def loss_one(p, xi, yi):
        logits = functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(logits, yi.unsqueeze(0))

    return vmap(grad(loss_one), in_dims=(None, 0, 0))(params, x, y)


def privatize(grads, clip_norm, noise_multiplier, gen):
    """Clip every per-sample gradient to clip_norm, sum, add N(0, (sigma C)^2), average."""
    flat = torch.cat([g.flatten(1) for g in grads.values()], dim=1)
    scale = (clip_norm / (flat.norm(dim=1) + 1e-6)).clamp(max=1.0)
    batch = flat.size(0)
    out = {}
    for name, g in grads.items():
        clipped = (g * scale.view(-1, *([1] * (g.dim() - 1)))).sum(0)
        noise = torch.randn(clipped.shape, generator=gen) * noise_multiplier * clip_norm
        out[name] = (clipped + noise) / batch
    return out, (flat.norm(dim=1) > clip_norm).float().mean().item()
