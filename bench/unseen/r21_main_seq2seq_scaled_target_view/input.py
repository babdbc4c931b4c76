"""GRU encoder-decoder forecaster with teacher forcing and a scale-free (mean-scaled) MAE loss.

Every training example is one window of `context + horizon` steps of a 2-channel
series; encoder input, decoder (teacher-forcing) input and target are slices of it.
"""
import argparse
import math

import torch
import torch.nn as nn


def make_series(n_series, length, generator):
    t = torch.arange(length).float()
    level = 1.0 + 4.0 * torch.rand(n_series, 1, 2, generator=generator)      # very different scales
    period = 8 + 8 * torch.rand(n_series, 1, 2, generator=generator)
    season = torch.sin(2 * math.pi * t[None, :, None] / period)
    noise = 0.1 * torch.randn(n_series, length, 2, generator=generator)
    return level * (1.0 + 0.5 * season + noise)


def make_windows(series, window, stride):
    return series.unfold(1, window, stride).permute(0, 1, 3, 2).reshape(-1, window, series.shape[-1])


class TokenEmbedding(nn.Module):
    """Informer-style value embedding: a 1-D convolution over time on the raw values."""

    def __init__(self, c, hidden, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(c, hidden, kernel_size, padding=kernel_size // 2)

    def forward(self, x):                                   # [B, T, c] -> [B, T, hidden]
        return torch.tanh(self.conv(x.transpose(1, 2)).transpose(1, 2))


class Seq2Seq(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.enc_in = TokenEmbedding(c, hidden, kernel_size=3)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.dec_in = TokenEmbedding(c, hidden, kernel_size=1)   # pointwise: keeps the decoder causal
        self.decoder = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, c)

    def forward(self, past, dec_inputs):
        _, h = self.encoder(self.enc_in(past))
        out, _ = self.decoder(self.dec_in(dec_inputs), h)
        return self.head(out)

    @torch.no_grad()
    def generate(self, past, horizon):
        _, h = self.encoder(self.enc_in(past))
        y, preds = past[:, -1:], []
        for _ in range(horizon):
            out, h = self.decoder(self.dec_in(y), h)
            y = self.head(out)
            preds.append(y)
        return torch.cat(preds, dim=1)


def scaled_mae(pred, target, scale):
    """MAE after dividing by the per-series mean level of the context (scale-free across series)."""
    target /= scale
    return (pred / scale - target).abs().mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--context", type=int, default=24)
    ap.add_argument("--horizon", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=24)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    series = make_series(16, 120, g)
    windows = make_windows(series, args.context + args.horizon, stride=12)
    n_val = windows.shape[0] // 5
    train_w, val_w = windows[n_val:], windows[:n_val]
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(train_w), batch_size=args.batch,
                                         shuffle=True, generator=torch.Generator().manual_seed(1))
    model = Seq2Seq(series.shape[-1], args.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    C = args.context
    for epoch in range(args.epochs):
        total, n = 0.0, 0
        for (window,) in loader:
            past = window[:, :C]
            dec_inputs = window[:, C - 1:-1]          # teacher forcing: previous true value
            target = window[:, C:]
            scale = past.abs().mean(dim=1, keepdim=True) + 1e-3
            pred = model(past, dec_inputs)
            loss = scaled_mae(pred, target, scale)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, n = total + loss.item() * len(window), n + len(window)
        past, target = val_w[:, :C], val_w[:, C:]
        scale = past.abs().mean(dim=1, keepdim=True) + 1e-3
        val = ((model.generate(past, args.horizon) - target) / scale).abs().mean().item()
        print(f"epoch {epoch} train {total / n:.6f} val (free-running) {val:.6f}")
    print(f"param checksum: {sum(p.detach().double().pow(2).sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
