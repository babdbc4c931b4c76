import torch


def synth_batch(batch_size, n_tokens, n_mels, frames_per_token, generator):
    """Log-mel-like features: every token has a fixed spectral template."""
    templates = torch.randn(n_tokens + 1, n_mels, generator=torch.Generator().manual_seed(99))
    lens = torch.randint(3, 7, (batch_size,), generator=generator)
    max_t = int(lens.max()) * frames_per_token
    feats = torch.zeros(batch_size, max_t, n_mels)
    labels = torch.zeros(batch_size, int(lens.max()), dtype=torch.long)
    for b in range(batch_size):
        toks = torch.randint(1, n_tokens + 1, (int(lens[b]),), generator=generator)
        labels[b, :len(toks)] = toks
        frames = templates[toks].repeat_interleave(frames_per_token, 0)
        feats[b, :frames.shape[0]] = frames
    feats += 0.3 * torch.randn(feats.shape, generator=generator)
    feat_lens = lens * frames_per_token
    return feats, feat_lens, labels, lens


def spec_augment_(feats, freq_mask, time_mask, generator):
    """In-place SpecAugment on raw features (no gradient flows into the data)."""
    b, t, f = feats.shape
    for i in range(b):
        f0 = int(torch.randint(0, f - freq_mask, (1,), generator=generator))
        t0 = int(torch.randint(0, t - time_mask, (1,), generator=generator))
        feats[i, :, f0:f0 + freq_mask] = 0.0
        feats[i, t0:t0 + time_mask, :] = 0.0
    return feats
