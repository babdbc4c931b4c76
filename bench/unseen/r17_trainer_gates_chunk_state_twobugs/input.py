"""Truncated-BPTT training of a hand-written layer-normalised LSTM on a long
multichannel sensor stream (next-step regression), driven by a Trainer class."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNormLSTMCell(nn.Module):
    def __init__(self, d_in, d_hidden):
        super().__init__()
        self.ih = nn.Linear(d_in, 4 * d_hidden)
        self.hh = nn.Linear(d_hidden, 4 * d_hidden, bias=False)
        self.ln_gates = nn.LayerNorm(4 * d_hidden)
        self.ln_cell = nn.LayerNorm(d_hidden)

    def forward(self, x, state):
        h, c = state
        gates = self.ln_gates(self.ih(x) + self.hh(h))
        i, f, g, o = gates.chunk(4, dim=1)
        i.sigmoid_()
        f.sigmoid_()
        g.tanh_()
        o.sigmoid_()
        c = f * c + i * g
        h = o * torch.tanh(self.ln_cell(c))
        return h, c


class StreamModel(nn.Module):
    """Keeps its recurrent state between calls so consecutive windows of the
    stream continue where the previous window stopped."""

    def __init__(self, d_in, d_hidden):
        super().__init__()
        self.d_hidden = d_hidden
        self.cell = LayerNormLSTMCell(d_in, d_hidden)
        self.head = nn.Linear(d_hidden, d_in)
        self.h = None
        self.c = None

    def reset_state(self, batch_size):
        self.h = torch.zeros(batch_size, self.d_hidden)
        self.c = torch.zeros(batch_size, self.d_hidden)

    def forward(self, window):  # window: (T, B, d_in)
        h, c = self.h, self.c
        outs = []
        for x_t in window:
            h, c = self.cell(x_t, (h, c))
            outs.append(self.head(h))
        self.h, self.c = h, c
        return torch.stack(outs)


def make_stream(n_steps=810, n_streams=8, d=3):
    t = torch.arange(n_steps, dtype=torch.float32).unsqueeze(1)
    freqs = 0.05 + 0.1 * torch.rand(n_streams, d)
    phase = 2 * math.pi * torch.rand(n_streams, d)
    clean = torch.sin(t.unsqueeze(-1) * freqs + phase)  # (T, B, d)
    return clean + 0.05 * torch.randn(clean.shape)


class Trainer:
    def __init__(self, model, stream, bptt=20, lr=5e-3):
        self.model = model
        self.stream = stream
        self.bptt = bptt
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)

    def step(self, inputs, targets):
        preds = self.model(inputs)
        loss = F.mse_loss(preds, targets)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def train_epoch(self):
        self.model.reset_state(self.stream.shape[1])
        losses = []
        for start in range(0, self.stream.shape[0] - 1 - self.bptt + 1, self.bptt):
            inputs = self.stream[start:start + self.bptt]
            targets = self.stream[start + 1:start + 1 + self.bptt]
            losses.append(self.step(inputs, targets))
        return sum(losses) / len(losses)

    def fit(self, epochs):
        for epoch in range(epochs):
            loss = self.train_epoch()
            print(f"epoch {epoch} mse {loss:.5f}")


def main():
    torch.manual_seed(0)
    stream = make_stream()
    model = StreamModel(d_in=stream.shape[2], d_hidden=16)
    Trainer(model, stream).fit(epochs=3)


if __name__ == "__main__":
    main()
