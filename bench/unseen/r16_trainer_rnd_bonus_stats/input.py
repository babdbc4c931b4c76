"""Contextual bandit with a Random Network Distillation (RND) exploration bonus.
Policy gradient with a batch-mean baseline; the intrinsic reward is normalised by
running statistics (RunningMeanStd, as in OpenAI baselines)."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    seed: int = 0
    state_dim: int = 8
    actions: int = 4
    batch: int = 64
    steps: int = 40
    beta: float = 0.5        # weight of the intrinsic bonus
    lr: float = 0.01
    log_every: int = 8


class RunningMeanStd:
    def __init__(self, eps=1e-4):
        self.mean = torch.zeros(())
        self.var = torch.ones(())
        self.count = eps

    def update(self, x):
        b_mean, b_var, b_count = x.mean(), x.var(unbiased=False), x.numel()
        delta = b_mean - self.mean
        tot = self.count + b_count
        self.mean = self.mean + delta * b_count / tot
        m2 = self.var * self.count + b_var * b_count + delta ** 2 * self.count * b_count / tot
        self.var = m2 / tot
        self.count = tot

    def normalize(self, x):
        return (x - self.mean) / torch.sqrt(self.var + 1e-8)


class RND(nn.Module):
    def __init__(self, in_dim, out_dim=16):
        super().__init__()
        self.target = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, out_dim))
        self.predictor = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, out_dim))
        self.target.requires_grad_(False)

    def intrinsic_reward(self, z):
        """Per-sample prediction error; also the predictor's training loss."""
        return (self.predictor(z) - self.target(z)).pow(2).mean(-1)


class BanditTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        g = torch.Generator().manual_seed(cfg.seed + 1)
        self.true_w = torch.randn(cfg.actions, cfg.state_dim, generator=g)
        self.policy = nn.Sequential(nn.Linear(cfg.state_dim, 32), nn.Tanh(), nn.Linear(32, cfg.actions))
        self.rnd = RND(cfg.state_dim + cfg.actions)
        params = list(self.policy.parameters()) + list(self.rnd.predictor.parameters())
        self.opt = torch.optim.Adam(params, lr=cfg.lr)
        self.rms = RunningMeanStd()

    def collect(self):
        s = torch.randn(self.cfg.batch, self.cfg.state_dim)
        dist = torch.distributions.Categorical(logits=self.policy(s))
        a = dist.sample()
        r_ext = (self.true_w[a] * s).sum(-1) + 0.1 * torch.randn(self.cfg.batch)
        return s, a, dist.log_prob(a), r_ext

    def compute_rewards(self, s, a, r_ext):
        z = torch.cat([s, F.one_hot(a, self.cfg.actions).float()], dim=-1)
        r_int = self.rnd.intrinsic_reward(z)
        self.rms.update(r_int)
        reward = r_ext + self.cfg.beta * self.rms.normalize(r_int)
        return reward, r_int

    def update(self, logp, reward, r_int):
        adv = reward - reward.mean()
        pg_loss = -(logp * adv).mean()
        rnd_loss = r_int.mean()
        loss = pg_loss + rnd_loss
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return pg_loss.item(), rnd_loss.item()

    def fit(self):
        for step in range(1, self.cfg.steps + 1):
            s, a, logp, r_ext = self.collect()
            reward, r_int = self.compute_rewards(s, a, r_ext)
            pg, rnd = self.update(logp, reward, r_int)
            if step % self.cfg.log_every == 0:
                print(f"step {step:3d} r_ext {r_ext.mean().item():.5f} pg {pg:.5f} rnd {rnd:.5f}")


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    trainer = BanditTrainer(cfg)
    trainer.fit()
    with torch.no_grad():
        s = torch.randn(512, cfg.state_dim, generator=torch.Generator().manual_seed(99))
        greedy = trainer.policy(s).argmax(-1)
        best = (trainer.true_w @ s.t()).argmax(0)
        match = (greedy == best).float().mean().item()
        pnorm = sum(p.norm() ** 2 for p in trainer.rnd.predictor.parameters()).sqrt().item()
    print(f"greedy==best {match:.4f}  rms mean {float(trainer.rms.mean):.5f} var {float(trainer.rms.var):.5f}")
    print(f"predictor norm {pnorm:.5f}")


if __name__ == "__main__":
    main()
