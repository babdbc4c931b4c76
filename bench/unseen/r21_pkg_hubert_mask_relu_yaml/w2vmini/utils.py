import math
import os

import torch
import yaml


def load_config(name="config.yaml"):
    with open(os.path.join(os.path.dirname(__file__), name)) as f:
        return yaml.safe_load(f)


def make_corpus(n_utts, frames, samples_per_frame, num_units, seed):
    """Each utterance is a Markov chain of acoustic units; each unit is a tone + noise."""
    g = torch.Generator().manual_seed(seed)
    trans = torch.softmax(2.0 * torch.randn(num_units, num_units, generator=g), dim=-1)
    units = torch.empty(n_utts, frames, dtype=torch.long)
    units[:, 0] = torch.randint(0, num_units, (n_utts,), generator=g)
    for t in range(1, frames):
        units[:, t] = torch.multinomial(trans[units[:, t - 1]], 1, generator=g).squeeze(1)
    freqs = torch.linspace(0.05, 0.45, num_units) * 2 * math.pi
    t = torch.arange(samples_per_frame).float()
    wav = torch.sin(freqs[units][..., None] * t)                     # [n, frames, spf]
    wav = wav + 0.3 * torch.randn(wav.shape, generator=g)
    return wav.reshape(n_utts, 1, frames * samples_per_frame), units


def compute_mask_indices(batch, frames, prob, length, generator):
    """Span masking as in wav2vec 2.0 / HuBERT: pick start frames, mask `length` frames from each."""
    num_spans = max(1, int(round(prob * frames / length)))
    mask = torch.zeros(batch, frames, dtype=torch.bool)
    for b in range(batch):
        starts = torch.randperm(frames - length, generator=generator)[:num_spans]
        for s in starts.tolist():
            mask[b, s:s + length] = True
    return mask


def apply_time_mask_(x, mask, mask_emb):
    """Replace the masked frames of x [B, T, C] by the learned mask embedding."""
    x[mask] = mask_emb
    return x
