"""PPO (clipped surrogate, GAE) on a vectorised corridor task."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


@dataclass
class PPOConfig:
    n_envs: int = 16
    corridor: int = 7
    max_steps: int = 20
    rollout_len: int = 32
    iterations: int = 10
    ppo_epochs: int = 4
    minibatch: int = 128
    gamma: float = 0.97
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    lr: float = 3e-3
    seed: int = 0


class CorridorEnv:
    """Walk left/right; the goal end is given in the observation."""

    def __init__(self, n_envs, length, max_steps):
        self.n, self.length, self.max_steps = n_envs, length, max_steps
        self.pos = torch.full((n_envs,), length // 2)
        self.goal = torch.randint(0, 2, (n_envs,))
        self.t = torch.zeros(n_envs, dtype=torch.long)
        self.ep_return = torch.zeros(n_envs)
        self.finished = []

    def obs(self):
        return torch.cat([F.one_hot(self.pos, self.length).float(), F.one_hot(self.goal, 2).float()], dim=1)

    def step(self, action):
        self.pos = (self.pos + 2 * action - 1).clamp(0, self.length - 1)
        self.t += 1
        reached = self.pos == self.goal * (self.length - 1)
        reward = reached.float() - 0.02
        done = reached | (self.t >= self.max_steps)
        self.ep_return += reward
        self.finished.extend(self.ep_return[done].tolist())
        self.ep_return[done], self.t[done] = 0.0, 0
        self.pos[done] = self.length // 2
        self.goal[done] = torch.randint(0, 2, (int(done.sum()),))
        return self.obs(), reward, done.float()


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


class PPOTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.env = CorridorEnv(cfg.n_envs, cfg.corridor, cfg.max_steps)
        self.net = ActorCritic(cfg.corridor + 2, 2)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)

    def collect_rollout(self):
        obs_buf, act_buf, logp_buf, val_buf, rew_buf, done_buf = [], [], [], [], [], []
        obs = self.env.obs()
        for _ in range(self.cfg.rollout_len):
            logits, value = self.net(obs)
            dist = Categorical(logits=logits)
            action = dist.sample()
            next_obs, reward, done = self.env.step(action)
            obs_buf.append(obs)
            act_buf.append(action)
            logp_buf.append(dist.log_prob(action))
            val_buf.append(value)
            rew_buf.append(reward)
            done_buf.append(done)
            obs = next_obs
        old_log_probs = torch.stack(logp_buf).detach()
        advantages, returns = self.compute_gae(rew_buf, val_buf, done_buf, obs)
        return {"obs": torch.stack(obs_buf).flatten(0, 1), "actions": torch.stack(act_buf).flatten(),
                "old_log_probs": old_log_probs.flatten(), "advantages": advantages.flatten(),
                "returns": returns.flatten()}

    @torch.no_grad()
    def compute_gae(self, rewards, values, dones, last_obs):
        _, next_value = self.net(last_obs)
        gae = torch.zeros(self.cfg.n_envs)
        advantages = []
        for t in reversed(range(len(rewards))):
            not_done = 1.0 - dones[t]
            delta = rewards[t] + self.cfg.gamma * next_value * not_done - values[t]
            gae = delta + self.cfg.gamma * self.cfg.gae_lambda * not_done * gae
            advantages.insert(0, gae)
            next_value = values[t]
        advantages = torch.stack(advantages)
        returns = advantages + torch.stack(values)
        return (advantages - advantages.mean()) / (advantages.std() + 1e-8), returns

    def update(self, batch):
        n = batch["obs"].size(0)
        stats = []
        for _ in range(self.cfg.ppo_epochs):
            perm = torch.randperm(n)
            for start in range(0, n, self.cfg.minibatch):
                idx = perm[start:start + self.cfg.minibatch]
                logits, value = self.net(batch["obs"][idx])
                dist = Categorical(logits=logits)
                new_log_probs = dist.log_prob(batch["actions"][idx])
                ratio = torch.exp(new_log_probs - batch["old_log_probs"][idx])
                adv = batch["advantages"][idx]
                clipped = torch.clamp(ratio, 1 - self.cfg.clip_eps, 1 + self.cfg.clip_eps)
                policy_loss = -torch.min(ratio * adv, clipped * adv).mean()
                value_loss = F.mse_loss(value, batch["returns"][idx])
                loss = policy_loss + self.cfg.vf_coef * value_loss - self.cfg.ent_coef * dist.entropy().mean()
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), 0.5)
                self.optimizer.step()
                stats.append((policy_loss.item(), value_loss.item()))
        return [sum(s) / len(stats) for s in zip(*stats)]

    def fit(self):
        for it in range(self.cfg.iterations):
            self.env.finished.clear()
            batch = self.collect_rollout()
            policy_loss, value_loss = self.update(batch)
            finished = self.env.finished
            print(f"iter {it} episodes {len(finished)} avg return {sum(finished) / max(len(finished), 1):.4f} "
                  f"policy loss {policy_loss:.4f} value loss {value_loss:.4f}")


def main():
    cfg = PPOConfig()
    torch.manual_seed(cfg.seed)
    trainer = PPOTrainer(cfg)
    trainer.fit()
    print(f"checksum {sum(p.sum().item() for p in trainer.net.parameters()):.4f}")


if __name__ == "__main__":
    main()
