"""Advantage actor-critic (A2C) with separate actor / critic networks and
optimizers on a vectorised corridor environment written in torch."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Corridor:
    """Walk left/right along n cells; +1 for reaching the right end, small step cost."""

    def __init__(self, n_envs, n_cells=8, seed=0):
        self.n_envs, self.n_cells = n_envs, n_cells
        self.gen = torch.Generator().manual_seed(seed)
        self.pos = self._starts(n_envs)

    def _starts(self, k):
        return torch.randint(0, self.n_cells // 2, (k,), generator=self.gen)

    def obs(self):
        return F.one_hot(self.pos, self.n_cells).float()

    def step(self, action):
        self.pos = (self.pos + 2 * action - 1).clamp(0, self.n_cells - 1)
        done = self.pos == self.n_cells - 1
        reward = torch.where(done, torch.tensor(1.0), torch.tensor(-0.01))
        if done.any():
            self.pos[done] = self._starts(int(done.sum()))
        return reward, done.float()


def mlp(d_in, d_out):
    return nn.Sequential(nn.Linear(d_in, 32), nn.Tanh(), nn.Linear(32, d_out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--updates", type=int, default=40)
    ap.add_argument("--n-envs", type=int, default=32)
    ap.add_argument("--horizon", type=int, default=8)
    ap.add_argument("--gamma", type=float, default=0.9)
    ap.add_argument("--entropy-coef", type=float, default=0.01)
    args = ap.parse_args()

    torch.manual_seed(0)
    env = Corridor(args.n_envs)
    actor, critic = mlp(env.n_cells, 2), mlp(env.n_cells, 1)
    opt_actor = torch.optim.Adam(actor.parameters(), lr=3e-3)
    opt_critic = torch.optim.Adam(critic.parameters(), lr=1e-2)

    for update in range(1, args.updates + 1):
        log_probs, values, rewards, dones, entropies = [], [], [], [], []
        for _ in range(args.horizon):
            obs = env.obs()
            dist = Categorical(logits=actor(obs))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            values.append(critic(obs).squeeze(-1))
            r, d = env.step(action)
            rewards.append(r)
            dones.append(d)
        with torch.no_grad():
            ret = critic(env.obs()).squeeze(-1)
        returns = []
        for r, d in zip(reversed(rewards), reversed(dones)):
            ret = r + args.gamma * ret * (1 - d)
            returns.append(ret)
        returns = torch.stack(returns[::-1])
        values = torch.stack(values)
        advantages = returns - values

        critic_loss = advantages.pow(2).mean()
        opt_critic.zero_grad()
        critic_loss.backward()
        opt_critic.step()

        actor_loss = -(torch.stack(log_probs) * advantages.detach()).mean() \
            - args.entropy_coef * torch.stack(entropies).mean()
        opt_actor.zero_grad()
        actor_loss.backward()
        opt_actor.step()

        if update % 10 == 0:
            print(f"update {update} reward/step {torch.stack(rewards).mean().item():.5f} "
                  f"critic {critic_loss.item():.5f} entropy {torch.stack(entropies).mean().item():.5f}")


if __name__ == "__main__":
    main()
