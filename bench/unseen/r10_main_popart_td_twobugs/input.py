"""TD(0) value learning with PopArt-normalised targets on a synthetic Markov reward process.

The reward scale jumps by 40x half-way through training; PopArt (van Hasselt et al. 2016) keeps the
value head's targets normalised and rescales the head so that its unnormalised outputs are preserved.

    python input.py --steps 300
"""
import argparse
import copy
from dataclasses import dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    n_states: int = 40
    feat_dim: int = 8
    hidden: int = 32
    gamma: float = 0.9
    beta: float = 0.02          # PopArt statistics step size
    lr: float = 3e-3
    batch_size: int = 64
    steps: int = 300
    target_sync: int = 25        # steps between target-network syncs
    scale_jump_at: int = 150
    scale_jump: float = 40.0
    log_every: int = 50
    seed: int = 4


class PopArt(nn.Module):
    """Adaptively rescaled linear value head: v = sigma * (W h + b) + mu."""

    def __init__(self, in_dim, beta):
        super().__init__()
        self.linear = nn.Linear(in_dim, 1)
        self.beta = beta
        self.register_buffer("mu", torch.zeros(()))
        self.register_buffer("nu", torch.ones(()))

    @property
    def sigma(self):
        return (self.nu - self.mu ** 2).clamp(min=1e-4).sqrt()

    def forward(self, h):
        return self.linear(h).squeeze(-1)          # normalised prediction

    def denormalize(self, n):
        return self.sigma * n + self.mu

    def normalize(self, v):
        return (v - self.mu) / self.sigma

    def update(self, targets):
        """ART: track the targets' first/second moments; POP: rescale the head to keep v unchanged."""
        old_mu, old_sigma = self.mu.clone(), self.sigma.clone()
        self.mu.mul_(1 - self.beta).add_(self.beta * targets.mean())
        self.nu.mul_(1 - self.beta).add_(self.beta * (targets ** 2).mean())
        with torch.no_grad():
            new_sigma = self.sigma
            self.linear.weight.mul_(old_sigma / new_sigma)
            self.linear.bias.mul_(old_sigma).add_(old_mu - self.mu).div_(new_sigma)


class ValueNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(cfg.feat_dim, cfg.hidden), nn.Tanh(),
                                  nn.Linear(cfg.hidden, cfg.hidden), nn.Tanh())
        self.popart = PopArt(cfg.hidden, cfg.beta)

    def forward(self, x):
        return self.popart(self.body(x))


def make_mrp(cfg, gen):
    feats = torch.randn(cfg.n_states, cfg.feat_dim, generator=gen)
    logits = torch.randn(cfg.n_states, cfg.n_states, generator=gen) * 2.0
    P = torch.softmax(logits, dim=1)
    reward = torch.randn(cfg.n_states, generator=gen)
    return feats, P, reward


def true_values(P, reward, gamma):
    n = P.size(0)
    return torch.linalg.solve(torch.eye(n) - gamma * P, reward)


def parse_config():
    p = argparse.ArgumentParser()
    for f in fields(Config):
        p.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Config(**vars(p.parse_args()))


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg.seed)
    feats, P, base_reward = make_mrp(cfg, gen)
    net = ValueNet(cfg)
    target_net = copy.deepcopy(net)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    v_true = true_values(P, base_reward, cfg.gamma)
    print(f"true values: mean {v_true.mean().item():.4f} std {v_true.std().item():.4f} (x{cfg.scale_jump:g} after step {cfg.scale_jump_at})")

    for step in range(1, cfg.steps + 1):
        scale = cfg.scale_jump if step > cfg.scale_jump_at else 1.0
        s = torch.randint(0, cfg.n_states, (cfg.batch_size,), generator=gen)
        s2 = torch.multinomial(P[s], 1, generator=gen).squeeze(1)
        r = scale * base_reward[s]

        v_norm = net(feats[s])
        target = r + cfg.gamma * net.popart.denormalize(target_net(feats[s2]))
        net.popart.update(target)
        loss = F.mse_loss(v_norm, net.popart.normalize(target))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % cfg.target_sync == 0:
            target_net.load_state_dict(net.state_dict())

        if step % cfg.log_every == 0 or step == 1:
            with torch.no_grad():
                v = net.popart.denormalize(net(feats))
                err = (v - true_values(P, scale * base_reward, cfg.gamma)).pow(2).mean().sqrt()
            print(f"step {step:4d} loss {loss.item():.5f} mu {net.popart.mu.item():.4f} "
                  f"sigma {net.popart.sigma.item():.4f} value_rmse {err.item():.4f}")


if __name__ == "__main__":
    main()
