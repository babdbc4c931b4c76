"""GRU encoder-decoder forecaster with scheduled sampling.

Multi-horizon forecasting of noisy seasonal series: an encoder GRU reads a
window of history, a GRUCell decoder rolls out the horizon autoregressively.
During training the decoder is fed the ground truth with probability
`teacher_forcing` (annealed per epoch) and its own previous prediction
otherwise (Bengio et al., 2015).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_series(n_series, length, g):
    t = torch.arange(length).float()
    period = torch.randint(8, 20, (n_series, 1), generator=g).float()
    phase = torch.rand(n_series, 1, generator=g) * 6.28
    amp = 0.5 + torch.rand(n_series, 1, generator=g)
    trend = 0.01 * torch.randn(n_series, 1, generator=g)
    s = amp * torch.sin(6.28 * t / period + phase) + trend * t
    return s + 0.1 * torch.randn(n_series, length, generator=g)


def windows(series, hist, horizon, stride):
    xs, ys = [], []
    for start in range(0, series.shape[1] - hist - horizon + 1, stride):
        xs.append(series[:, start:start + hist])
        ys.append(series[:, start + hist:start + hist + horizon])
    return torch.cat(xs), torch.cat(ys)


class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.cell = nn.GRUCell(1, hidden)
        self.step_emb = nn.Embedding(64, hidden)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, h, last_obs, horizon, targets=None, tf_mask=None):
        B = h.shape[0]
        preds = h.new_zeros(B, horizon)
        dec_in = last_obs
        for t in range(horizon):
            h = self.cell(dec_in, h + self.step_emb.weight[t])
            preds[:, t] = self.head(h).squeeze(-1)
            if targets is not None and tf_mask[t]:
                dec_in = targets[:, t:t + 1]
            else:
                dec_in = preds[:, t:t + 1]
        return preds


class Seq2SeqForecaster(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.encoder = nn.GRU(1, hidden, batch_first=True)
        self.decoder = Decoder(hidden)

    def forward(self, history, horizon, targets=None, tf_mask=None):
        # per-window scaling, undone on the way out
        loc = history.mean(1, keepdim=True)
        scale = history.std(1, keepdim=True) + 1e-3
        z = (history - loc) / scale
        _, h = self.encoder(z.unsqueeze(-1))
        zt = None if targets is None else (targets - loc) / scale
        out = self.decoder(h[-1], z[:, -1:], horizon, zt, tf_mask)
        return out * scale + loc


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n-series", type=int, default=24)
    p.add_argument("--length", type=int, default=120)
    p.add_argument("--hist", type=int, default=24)
    p.add_argument("--horizon", type=int, default=12)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--tf-start", type=float, default=0.9)
    p.add_argument("--tf-decay", type=float, default=0.7)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    series = make_series(args.n_series, args.length, g)
    split = int(args.length * 0.75)
    xtr, ytr = windows(series[:, :split], args.hist, args.horizon, stride=4)
    xva, yva = windows(series[:, split - args.hist:], args.hist, args.horizon, stride=6)

    model = Seq2SeqForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    tf_ratio = args.tf_start
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(xtr.shape[0], generator=g)
        tot, n = 0.0, 0
        for i in range(0, xtr.shape[0], args.batch_size):
            idx = perm[i:i + args.batch_size]
            tf_mask = (torch.rand(args.horizon, generator=g) < tf_ratio).tolist()
            pred = model(xtr[idx], args.horizon, ytr[idx], tf_mask)
            loss = F.l1_loss(pred, ytr[idx])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            tot += loss.item() * len(idx)
            n += len(idx)
        model.eval()
        with torch.no_grad():
            pv = model(xva, args.horizon)
            mae = F.l1_loss(pv, yva).item()
            mae_last = (pv[:, -1] - yva[:, -1]).abs().mean().item()
        print(f"epoch {epoch} tf {tf_ratio:.2f} train_mae {tot / n:.5f} val_mae {mae:.5f} val_mae_h{args.horizon} {mae_last:.5f}")
        tf_ratio *= args.tf_decay

    w = torch.cat([p.flatten() for p in model.parameters()])
    print(f"final val_mae {mae:.5f} param_norm {w.norm():.5f}")


if __name__ == "__main__":
    main()
