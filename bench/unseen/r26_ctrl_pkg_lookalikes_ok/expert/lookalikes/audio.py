"""Spectral loss where the magnitude comes from .abs() (which saves its complex input, not its output)."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def stft_mag(x, n_fft):
    spec = torch.stft(x, n_fft, n_fft // 4, n_fft, torch.hann_window(n_fft), return_complex=True)
    mag = spec.abs()
    mag.clamp_(min=1e-7)
    return mag


def run(cfg, gen):
    t = torch.arange(cfg["length"]) / cfg["length"]
    f0 = 8 + 8 * torch.rand(cfg["n_clips"], 1, generator=gen)
    wav = torch.sin(2 * math.pi * f0 * t * 8) * torch.sin(math.pi * t) ** 2
    cond = f0.expand(-1, 8) / 16.0
    model = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, cfg["length"]), nn.Tanh())
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        tot = 0.0
        for i in range(0, cfg["n_clips"], 4):
            y_hat = model(cond[i:i + 4])
            loss = 0.0
            for n_fft in cfg["fft_sizes"]:
                a, b = stft_mag(y_hat, n_fft), stft_mag(wav[i:i + 4], n_fft)
                loss = loss + torch.norm(b - a) / torch.norm(b) + F.l1_loss(a.log(), b.log())
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item()
        print(f"vocoder epoch {epoch} stft_loss {tot / (cfg['n_clips'] // 4):.6f}")
    return model
