"""Synthetic 'speech': a few harmonics with gliding pitch and an amplitude envelope."""
import math

import torch


def make_wave(n, length, gen):
    t = torch.arange(length, dtype=torch.float32) / length
    waves = []
    for _ in range(n):
        f0 = 6.0 + 10.0 * torch.rand(1, generator=gen)
        glide = (torch.rand(1, generator=gen) - 0.5) * 8.0
        phase = 2 * math.pi * torch.cumsum((f0 + glide * t) / length * 16.0, dim=0)
        env = torch.sin(math.pi * t) ** 2 * (0.5 + 0.5 * torch.rand(1, generator=gen))
        w = sum((0.6 / k) * torch.sin(k * phase) for k in (1, 2, 3))
        waves.append(env * w + 0.01 * torch.randn(length, generator=gen))
    return torch.stack(waves)


def mel_features(wave, n_fft, hop, n_mels):
    """Log-magnitude spectrogram pooled into n_mels triangular bands (no grad needed)."""
    window = torch.hann_window(n_fft)
    spec = torch.stft(wave, n_fft, hop, n_fft, window, center=True, return_complex=True).abs()
    n_bins = spec.size(1)
    centers = torch.linspace(0, n_bins - 1, n_mels + 2)
    bins = torch.arange(n_bins, dtype=torch.float32)
    fb = torch.stack([
        torch.clamp(1 - (bins - centers[i + 1]).abs() / (centers[i + 1] - centers[i]), min=0)
        for i in range(n_mels)])
    mel = torch.einsum("mf,bft->bmt", fb, spec)
    return torch.log(mel + 1e-5)[..., : wave.size(-1) // hop]


def make_dataset(cfg, gen):
    train = make_wave(cfg["n_train"], cfg["segment_length"], gen)
    val = make_wave(cfg["n_val"], cfg["segment_length"], gen)
    feats = [mel_features(w, 4 * cfg["hop_size"], cfg["hop_size"], cfg["n_mels"]) for w in (train, val)]
    return (feats[0], train), (feats[1], val)
