"""IRNN (Le, Jaitly & Hinton 2015): ReLU RNN with identity-initialised recurrent weights,
trained with truncated BPTT on a long "marked running sum" task.

Each sequence is fed in chunks; the model keeps its hidden state between chunks of the same
batch (stateful RNN) and resets it when a new batch of sequences starts.
"""
import argparse
import dataclasses
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class Config:
    hidden: int = 32
    seq_len: int = 60
    chunk: int = 20
    n_seqs: int = 256
    batch_size: int = 32
    epochs: int = 2
    lr: float = 2e-3
    clip: float = 1.0
    seed: int = 0
    out_dir: str = "out"


def parse_config() -> Config:
    ap = argparse.ArgumentParser()
    for f in dataclasses.fields(Config):
        ap.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Config(**vars(ap.parse_args()))


def make_task(cfg: Config, gen):
    values = torch.rand(cfg.n_seqs, cfg.seq_len, generator=gen)
    marks = (torch.rand(cfg.n_seqs, cfg.seq_len, generator=gen) < 0.15).float()
    target = torch.cumsum(values * marks, dim=1) / 3.0
    return torch.stack([values, marks], dim=-1), target.unsqueeze(-1)


class IRNN(nn.Module):
    def __init__(self, n_in, hidden, n_out):
        super().__init__()
        self.hidden_size = hidden
        self.rnn = nn.RNN(n_in, hidden, nonlinearity="relu", batch_first=True)
        self.out = nn.Linear(hidden, n_out)
        self.reset_parameters()

    def reset_parameters(self):
        # IRNN: W_hh = I, biases 0, small input weights
        nn.init.normal_(self.rnn.weight_ih_l0, std=0.01)
        self.rnn.weight_hh_l0.copy_(torch.eye(self.hidden_size))
        nn.init.zeros_(self.rnn.bias_hh_l0)
        nn.init.zeros_(self.rnn.bias_ih_l0)


class StatefulIRNN(IRNN):
    """Keeps the hidden state between consecutive chunks of the same sequences."""

    def __init__(self, *args):
        super().__init__(*args)
        self.hidden = None

    def reset_state(self):
        self.hidden = None

    def forward(self, x_chunk):
        out, h_n = self.rnn(x_chunk, self.hidden)
        self.hidden = h_n
        return self.out(out)


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    x, y = make_task(cfg, torch.Generator().manual_seed(cfg.seed + 1))
    loader = DataLoader(TensorDataset(x, y), batch_size=cfg.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(cfg.seed + 2))
    model = StatefulIRNN(2, cfg.hidden, 1)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
    crit = nn.MSELoss()
    step = 0
    for epoch in range(cfg.epochs):
        for xb, yb in loader:
            model.reset_state()
            for t0 in range(0, cfg.seq_len, cfg.chunk):
                pred = model(xb[:, t0:t0 + cfg.chunk])
                loss = crit(pred, yb[:, t0:t0 + cfg.chunk])
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
                opt.step()
                print(f"epoch {epoch} step {step:3d} chunk {t0 // cfg.chunk} loss {loss.item():.6f}")
                step += 1
        sched.step()
    os.makedirs(cfg.out_dir, exist_ok=True)
    torch.save({"model": model.state_dict(), "config": dataclasses.asdict(cfg)},
               os.path.join(cfg.out_dir, "irnn.pt"))
    checksum = sum(p.double().sum() for p in model.parameters())
    print(f"checksum {checksum.item():.6f}")


if __name__ == "__main__":
    main()
