"""Pedestrian-like 2-D tracks: predict the next displacement from a short history.

At a 'junction' the walker turns left, goes straight or turns right, so the
next-step distribution is multimodal and a mixture density head is needed.
"""
import math

import torch


def make_tracks(cfg, g):
    n, T = cfg.n_tracks, cfg.hist_len + 1
    speed = 0.5 + 0.2 * torch.rand(n, 1, generator=g)
    heading = torch.rand(n, 1, generator=g) * 2 * math.pi
    steps = torch.arange(T).float()[None]
    turn = torch.randint(-1, 2, (n, 1), generator=g).float() * (math.pi / 4)
    ang = heading + (steps == T - 1).float() * turn
    disp = torch.cat([ang.cos()[..., None], ang.sin()[..., None]], -1) * speed[..., None]
    disp = disp + 0.03 * torch.randn(n, T, 2, generator=g)
    hist, target = disp[:, :-1], disp[:, -1]
    return hist, target


def standardise_(hist, target):
    """Scale both by the typical step length (in place: they are fresh tensors)."""
    s = hist.norm(dim=-1).mean()
    hist.div_(s)
    target.div_(s)
    return s
