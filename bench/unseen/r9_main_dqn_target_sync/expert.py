"""DQN with a target network on a small deterministic corridor task.

The agent starts in the middle of a corridor; reaching the right end pays +1, the left end -0.2,
every step costs 0.01. Observations are noisy one-hot positions.
"""
import argparse
import copy
import random
from collections import deque
from dataclasses import asdict, dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    n_states: int = 9
    max_steps: int = 20
    episodes: int = 60
    hidden: int = 32
    lr: float = 1e-3
    gamma: float = 0.95
    batch_size: int = 32
    buffer_size: int = 2000
    warmup: int = 64
    target_sync: int = 25
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_decay_episodes: int = 40
    seed: int = 3


class Corridor:
    def __init__(self, n_states, max_steps, gen):
        self.n, self.max_steps, self.gen = n_states, max_steps, gen

    def _obs(self):
        o = torch.zeros(self.n)
        o[self.pos] = 1.0
        return o + 0.05 * torch.randn(self.n, generator=self.gen)

    def reset(self):
        self.pos, self.t = self.n // 2, 0
        return self._obs()

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        self.t += 1
        if self.pos == self.n - 1:
            return self._obs(), 1.0, True
        if self.pos == 0:
            return self._obs(), -0.2, True
        return self._obs(), -0.01, self.t >= self.max_steps


class QNet(nn.Module):
    def __init__(self, n_obs, hidden, n_actions=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, x):
        return self.net(x)


class DQNAgent:
    def __init__(self, cfg):
        self.cfg = cfg
        self.policy_net = QNet(cfg.n_states, cfg.hidden)
        self.target_net = copy.deepcopy(self.policy_net)
        self.optimizer = torch.optim.Adam(self.policy_net.parameters(), lr=cfg.lr)
        self.buffer = deque(maxlen=cfg.buffer_size)
        self.rng = random.Random(cfg.seed)
        self.learn_steps = 0

    def act(self, obs, eps):
        if self.rng.random() < eps:
            return self.rng.randrange(2)
        with torch.no_grad():
            return int(self.policy_net(obs).argmax())

    def sync_target(self):
        self.target_net.load_state_dict(self.policy_net.state_dict())

    def compute_td_loss(self, batch):
        obs, actions, rewards, next_obs, dones = batch
        q = self.policy_net(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():   # the bootstrap target is a constant
            next_q = self.target_net(next_obs).max(1).values
            target = rewards + self.cfg.gamma * (1.0 - dones) * next_q
        return F.smooth_l1_loss(q, target)

    def learn(self):
        if len(self.buffer) < self.cfg.warmup:
            return None
        sample = self.rng.sample(list(self.buffer), self.cfg.batch_size)
        batch = [torch.stack([torch.as_tensor(s[i]) for s in sample]) for i in range(5)]
        batch[1], batch[2], batch[4] = batch[1].long(), batch[2].float(), batch[4].float()
        loss = self.compute_td_loss(batch)
        self.learn_steps += 1
        if self.learn_steps % self.cfg.target_sync == 0:
            self.sync_target()
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.policy_net.parameters(), 10.0)
        self.optimizer.step()
        return loss.item()


def run(cfg):
    gen = torch.Generator().manual_seed(cfg.seed)
    env, agent = Corridor(cfg.n_states, cfg.max_steps, gen), DQNAgent(cfg)
    returns, losses = [], []
    for ep in range(cfg.episodes):
        frac = min(1.0, ep / cfg.eps_decay_episodes)
        eps = cfg.eps_start + frac * (cfg.eps_end - cfg.eps_start)
        obs, done, ret = env.reset(), False, 0.0
        while not done:
            a = agent.act(obs, eps)
            nxt, r, done = env.step(a)
            agent.buffer.append((obs, a, r, nxt, float(done)))
            loss = agent.learn()
            if loss is not None:
                losses.append(loss)
            obs, ret = nxt, ret + r
        returns.append(ret)
        if ep % 10 == 9:
            recent = losses[-50:] or [0.0]
            print(f"episode {ep + 1:3d} eps {eps:.3f} mean_return {sum(returns[-10:]) / 10:.4f} "
                  f"td_loss {sum(recent) / len(recent):.6f} learn_steps {agent.learn_steps}")
    with torch.no_grad():
        q = agent.policy_net(torch.eye(cfg.n_states))
    print("greedy policy:", "".join("R" if a == 1 else "L" for a in q.argmax(1).tolist()))
    print("V(s):", " ".join(f"{v:.3f}" for v in q.max(1).values.tolist()))


def main():
    parser = argparse.ArgumentParser()
    for f in fields(Config):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    cfg = Config(**vars(parser.parse_args()))
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(1)
    print("config:", asdict(cfg))
    run(cfg)


if __name__ == "__main__":
    main()
