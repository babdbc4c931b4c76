import torch

from .schedule import T_MAX, alpha, sigma, time_grid


def ddim_step(eps_model, x, t, s, clip=4.0):
    """Deterministic DDIM update from time t to time s < t (x is overwritten)."""
    eps = eps_model(x, t)
    a_t, s_t = alpha(t)[:, None], sigma(t)[:, None]
    a_s, s_s = alpha(s)[:, None], sigma(s)[:, None]
    x.sub_(s_t * eps).div_(a_t).clamp_(-clip, clip)
    x.mul_(a_s).add_(s_s * eps)
    return x


@torch.no_grad()
def sample_ddim(eps_model, n, steps, generator):
    ts = time_grid(steps)
    x = torch.randn(n, 2, generator=generator)
    for i in range(steps, 0, -1):
        x = ddim_step(eps_model, x, ts[i].expand(n), ts[i - 1].expand(n))
    return x


@torch.no_grad()
def sample_consistency(model, n, generator):
    x = torch.randn(n, 2, generator=generator)
    return model(x, torch.full((n,), T_MAX))
