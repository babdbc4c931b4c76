import torch


def ema_smoother(E, s):
    """First-order IIR smoother M[t] = (1 - s) * M[t-1] + s * E[t] along the last (time) axis,
    with a learnable per-channel coefficient s of shape [C, 1]."""
    s = s.squeeze(-1)
    M = E[..., 0]
    out = [M]
    for t in range(1, E.shape[-1]):
        M = (1 - s) * M + s * E[..., t]
        out.append(M)
    return torch.stack(out, dim=-1)
