"""Learn the noise model of a constant-velocity tracker by maximising the
Kalman-filter innovation likelihood (system identification by backprop).

The filter is written batched over sequences so that a minibatch of
trajectories can be filtered at once; the transition damping, the process
noise Cholesky factor and the measurement noise are learned with Adam.
"""
import argparse
import dataclasses
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    n_seq: int = 96
    seq_len: int = 24
    batch_size: int = 32
    epochs: int = 8
    lr: float = 0.05
    dt: float = 0.5
    true_damping: float = 0.85
    true_q: float = 0.30
    true_r: float = 0.50
    seed: int = 0
    log_every: int = 2


def parse_config() -> Config:
    parser = argparse.ArgumentParser(description=__doc__)
    for f in dataclasses.fields(Config):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Config(**vars(parser.parse_args()))


def simulate(cfg: Config, g: torch.Generator):
    """Ground-truth trajectories of a damped constant-velocity model in 2-D."""
    dt, a = cfg.dt, cfg.true_damping
    Ft = torch.tensor([[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, a, 0], [0, 0, 0, a]], dtype=torch.float32)
    x = torch.zeros(cfg.n_seq, 4)
    x[:, 2:] = torch.randn(cfg.n_seq, 2, generator=g)
    ys = []
    for _ in range(cfg.seq_len):
        x = x @ Ft.T + cfg.true_q * torch.randn(cfg.n_seq, 4, generator=g) * torch.tensor([0.3, 0.3, 1.0, 1.0])
        ys.append(x[:, :2] + cfg.true_r * torch.randn(cfg.n_seq, 2, generator=g))
    return torch.stack(ys, 1)  # (N, T, 2)


class KalmanNoiseModel(nn.Module):
    """Linear-Gaussian state space model with learnable dynamics and noise."""

    def __init__(self, dt: float):
        super().__init__()
        self.dt = dt
        self.raw_damping = nn.Parameter(torch.tensor(0.0))          # sigmoid -> (0, 1)
        self.q_chol = nn.Parameter(0.5 * torch.eye(4))              # process noise factor
        self.raw_r = nn.Parameter(torch.zeros(2))                   # measurement noise
        self.register_buffer("H", torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0]]))
        self.register_buffer("P0", torch.eye(4) * 4.0)

    @property
    def F(self):
        a = torch.sigmoid(self.raw_damping)
        top = torch.tensor([[1.0, 0, self.dt, 0], [0, 1.0, 0, self.dt]])
        bottom = torch.cat([torch.zeros(2, 2), a * torch.eye(2)], dim=1)
        return torch.cat([top, bottom], dim=0)

    @property
    def Q(self):
        L = torch.tril(self.q_chol)
        return L @ L.T + 1e-4 * torch.eye(4)

    @property
    def R(self):
        return torch.diag(F.softplus(self.raw_r) + 1e-4)

    def forward(self, ys):
        """Negative log-likelihood of the observations, averaged per step."""
        B, T, _ = ys.shape
        Fm, Q, R, H = self.F, self.Q, self.R, self.H
        x = ys.new_zeros(B, 4)
        P = self.P0.expand(B, 4, 4)
        nll = ys.new_zeros(B)
        for t in range(T):
            # predict
            x = x @ Fm.T
            P = Fm @ P @ Fm.T + Q
            # innovation
            S = H @ P @ H.T + R
            L = torch.linalg.cholesky(S)
            innov = ys[:, t] - x @ H.T
            white = torch.linalg.solve_triangular(L, innov.unsqueeze(-1), upper=False).squeeze(-1)
            K = torch.cholesky_solve(H @ P, L).mT          # P H^T S^-1
            logdet = 2.0 * L.diagonal(dim1=-2, dim2=-1).log_().sum(-1)
            nll = nll + 0.5 * (white.pow(2).sum(-1) + logdet + 2 * math.log(2 * math.pi))
            # update
            x = x + (K @ innov.unsqueeze(-1)).squeeze(-1)
            P -= K @ H @ P
        return nll.mean() / T


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    ys = simulate(cfg, g)
    model = KalmanNoiseModel(cfg.dt)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    step = 0
    for epoch in range(cfg.epochs):
        perm = torch.randperm(cfg.n_seq, generator=g)
        total = 0.0
        for i in range(0, cfg.n_seq, cfg.batch_size):
            batch = ys[perm[i:i + cfg.batch_size]]
            loss = model(batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * batch.shape[0]
            step += 1
        if epoch % cfg.log_every == 0 or epoch == cfg.epochs - 1:
            with torch.no_grad():
                damp = torch.sigmoid(model.raw_damping).item()
                q = model.Q.diagonal().sqrt()
                r = model.R.diagonal().sqrt()
            print(f"epoch {epoch} nll {total / cfg.n_seq:.5f} damping {damp:.5f} "
                  f"q_pos {q[:2].mean():.5f} q_vel {q[2:].mean():.5f} r {r.mean():.5f}")

    with torch.no_grad():
        final = model(ys).item()
    print(f"final nll {final:.5f} |q_chol| {model.q_chol.norm():.5f} step {step}")


if __name__ == "__main__":
    main()
