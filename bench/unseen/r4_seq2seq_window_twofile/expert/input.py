# Stateful seq2seq forecaster (GRU encoder, attention GRU decoder with teacher forcing)
# trained on consecutive windows of long series; the decoder's final state seeds the
# encoder of the next window.
import math

import torch
import torch.nn.functional as F

from models import Seq2Seq

torch.manual_seed(0)

N_SERIES = 8
SRC_LEN = 16
TGT_LEN = 4
N_WINDOWS = 40
HIDDEN = 32
LR = 3e-3

t = torch.arange(N_WINDOWS * (SRC_LEN + TGT_LEN) + 1, dtype=torch.float32)
phase = torch.rand(N_SERIES, 1) * 2 * math.pi
period = 20 + 10 * torch.rand(N_SERIES, 1)
series = torch.sin(2 * math.pi * t / period + phase) + 0.3 * torch.sin(t / 7.0) + 0.05 * torch.randn(N_SERIES, t.numel())
series = series.unsqueeze(-1)  # (N_SERIES, T, 1)

model = Seq2Seq(HIDDEN)
opt = torch.optim.Adam(model.parameters(), lr=LR)

state = None
for w in range(N_WINDOWS):
    start = w * (SRC_LEN + TGT_LEN)
    src = series[:, start:start + SRC_LEN]
    tgt = series[:, start + SRC_LEN:start + SRC_LEN + TGT_LEN]
    preds, state = model(src, tgt, state)
    state = state.detach()  # truncated BPTT: keep the values, cut the graph
    loss = F.mse_loss(preds, tgt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"window {w} loss {loss.item():.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
