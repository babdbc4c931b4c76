"""Latent-imagination actor-critic (Dreamer-style) on a small linear-quadratic control task.

The world model (dynamics + reward heads) is fitted on a replay buffer of random
transitions.  The actor is trained by back-propagating lambda-returns through
imagined rollouts of the learned dynamics; the critic regresses the same
lambda-returns.  A callback keeps a slow (EMA) copy of the critic for bootstrapping.

Run:  python input.py
"""
import copy
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class Config:
    state_dim: int = 4
    action_dim: int = 2
    hidden: int = 64
    replay_size: int = 2048
    batch_size: int = 64
    horizon: int = 8
    gamma: float = 0.95
    lam: float = 0.9
    iterations: int = 60
    wm_warmup: int = 150
    wm_lr: float = 3e-3
    actor_lr: float = 3e-3
    critic_lr: float = 3e-3
    target_tau: float = 0.05
    log_every: int = 10
    seed: int = 0


# =========================================================================== environment
class LinearEnv:
    """s' = A s + B a + noise, r = -(|s|^2 + 0.1 |a|^2)."""

    def __init__(self, cfg, gen):
        n, m = cfg.state_dim, cfg.action_dim
        q, _ = torch.linalg.qr(torch.randn(n, n, generator=gen))
        self.A = 1.02 * q
        self.B = 0.5 * torch.randn(n, m, generator=gen)
        self.gen = gen

    def step(self, s, a):
        nxt = s @ self.A.T + a @ self.B.T + 0.01 * torch.randn(s.shape, generator=self.gen)
        r = -(s.pow(2).sum(-1) + 0.1 * a.pow(2).sum(-1))
        return nxt, r


def collect_replay(env, cfg, gen):
    s = torch.randn(cfg.replay_size, cfg.state_dim, generator=gen)
    a = torch.rand(cfg.replay_size, cfg.action_dim, generator=gen) * 2 - 1
    s2, r = env.step(s, a)
    return s, a, r, s2


# =========================================================================== networks
def mlp(i, h, o, out_act=None):
    layers = [nn.Linear(i, h), nn.ELU(), nn.Linear(h, h), nn.ELU(), nn.Linear(h, o)]
    if out_act is not None:
        layers.append(out_act)
    return nn.Sequential(*layers)


class WorldModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dynamics = mlp(cfg.state_dim + cfg.action_dim, cfg.hidden, cfg.state_dim)
        self.reward = mlp(cfg.state_dim + cfg.action_dim, cfg.hidden, 1)

    def forward(self, s, a):
        sa = torch.cat([s, a], -1)
        return s + self.dynamics(sa), self.reward(sa).squeeze(-1)

    def loss(self, s, a, r, s2):
        pred_s2, pred_r = self(s, a)
        return F.mse_loss(pred_s2, s2) + 0.1 * F.mse_loss(pred_r, r)


class Critic(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.net = mlp(cfg.state_dim, cfg.hidden, 1)

    def forward(self, s):
        return self.net(s).squeeze(-1)


# =========================================================================== objectives
def lambda_return(rewards, values, bootstrap, gamma, lam):
    """TD(lambda) targets for an imagined trajectory; rewards/values are [H, B]."""
    next_values = torch.cat([values[1:], bootstrap[None]], 0)
    inputs = rewards + gamma * next_values * (1 - lam)
    out, last = [], bootstrap
    for t in reversed(range(rewards.shape[0])):
        last = inputs[t] + gamma * lam * last
        out.append(last)
    return torch.stack(out[::-1], 0)


def value_loss(critic, states, returns):
    """Critic regression of the lambda-returns on the imagined states."""
    pred = critic(states.detach())
    return 0.5 * (pred - returns.detach()).pow(2).mean()


# =========================================================================== callbacks
class Callback:
    def on_iteration_end(self, trainer, it, logs): ...


class TargetCriticCallback(Callback):
    def on_iteration_end(self, trainer, it, logs):
        with torch.no_grad():
            for tp, p in zip(trainer.target_critic.parameters(), trainer.critic.parameters()):
                tp.lerp_(p, trainer.cfg.target_tau)


class PrintCallback(Callback):
    def on_iteration_end(self, trainer, it, logs):
        if (it + 1) % trainer.cfg.log_every == 0:
            print(f"iter {it + 1:3d} wm {logs['wm']:.6f} imag_return {logs['ret']:.6f} critic {logs['critic']:.6f}")


# =========================================================================== trainer
class DreamerTrainer:
    def __init__(self, cfg, env, replay, callbacks):
        self.cfg, self.env, self.replay, self.callbacks = cfg, env, replay, callbacks
        self.world_model = WorldModel(cfg)
        self.actor = mlp(cfg.state_dim, cfg.hidden, cfg.action_dim, nn.Tanh())
        self.critic = Critic(cfg)
        self.target_critic = copy.deepcopy(self.critic).requires_grad_(False)
        self.wm_opt = torch.optim.Adam(self.world_model.parameters(), lr=cfg.wm_lr)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr)
        self.gen = torch.Generator().manual_seed(cfg.seed + 11)

    def sample(self):
        idx = torch.randint(0, self.cfg.replay_size, (self.cfg.batch_size,), generator=self.gen)
        return [x[idx] for x in self.replay]

    def imagine(self, start):
        states, rewards = [start], []
        s = start
        for _ in range(self.cfg.horizon):
            a = self.actor(s)
            s, r = self.world_model(s, a)
            states.append(s)
            rewards.append(r)
        return torch.stack(states, 0), torch.stack(rewards, 0)

    def train_world_model(self, batch):
        loss = self.world_model.loss(*batch)
        self.wm_opt.zero_grad()
        loss.backward()
        self.wm_opt.step()
        return loss.item()

    def train_behavior(self, start):
        self.world_model.requires_grad_(False)
        states, rewards = self.imagine(start)
        values = self.target_critic(states)
        returns = lambda_return(rewards, values[:-1], values[-1], self.cfg.gamma, self.cfg.lam)
        actor_loss = -returns.mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()

        critic_loss = value_loss(self.critic, states[:-1], returns)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        self.world_model.requires_grad_(True)
        return -actor_loss.item(), critic_loss.item()

    @torch.no_grad()
    def evaluate(self, episodes=16, steps=20):
        g = torch.Generator().manual_seed(999)
        s = torch.randn(episodes, self.cfg.state_dim, generator=g)
        total = torch.zeros(episodes)
        for _ in range(steps):
            a = self.actor(s)
            s, r = self.env.step(s, a)
            total += r
        return total.mean().item()

    def fit(self):
        for _ in range(self.cfg.wm_warmup):
            self.train_world_model(self.sample())
        for it in range(self.cfg.iterations):
            batch = self.sample()
            wm = self.train_world_model(batch)
            ret, critic = self.train_behavior(batch[0])
            for cb in self.callbacks:
                cb.on_iteration_end(self, it, {"wm": wm, "ret": ret, "critic": critic})


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    env = LinearEnv(cfg, gen)
    replay = collect_replay(env, cfg, gen)
    trainer = DreamerTrainer(cfg, env, replay, [TargetCriticCallback(), PrintCallback()])
    trainer.fit()
    print(f"eval_return {trainer.evaluate():.6f}")
    params = [trainer.world_model, trainer.actor, trainer.critic]
    checksum = sum(p.double().sum().item() for m in params for p in m.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
