"""Recurrent advantage actor-critic on a cue-memory task (vectorised, pure torch).
Run: python input.py [--updates 150 --rollout 4 ...]"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

OBS_DIM, N_ACTIONS = 3, 2


class CueMemoryEnv:
    """A cue (one of two) is shown at the first step of an episode, then noise only; at
    the last step the agent must pick the action matching the cue (+1) or not (-1).
    Episodes last `length` steps and the envs are out of phase, so episodes run across
    rollout boundaries."""

    def __init__(self, n_envs, length, seed):
        self.n, self.length = n_envs, length
        self.gen = torch.Generator().manual_seed(seed)
        self.t = torch.arange(n_envs) % length
        self.cue = torch.randint(0, 2, (n_envs,), generator=self.gen)

    def observe(self):
        obs = 0.1 * torch.randn(self.n, OBS_DIM, generator=self.gen)
        first = self.t == 0
        obs[first, self.cue[first]] += 1.0
        obs[:, 2] += (self.t == self.length - 1).float()
        return obs

    def step(self, action):
        last = self.t == self.length - 1
        reward = torch.where(last, (action == self.cue).float() * 2 - 1, torch.zeros(self.n))
        self.t = (self.t + 1) % self.length
        new_cue = torch.randint(0, 2, (self.n,), generator=self.gen)
        self.cue = torch.where(last, new_cue, self.cue)
        return reward, last.float()


class RecurrentNet(nn.Module):
    def __init__(self, out_dim, hidden):
        super().__init__()
        self.cell = nn.GRUCell(OBS_DIM, hidden)
        self.head = nn.Linear(hidden, out_dim)

    def forward(self, obs, h):
        h = self.cell(obs, h)
        return self.head(h), h


class A2CTrainer:
    def __init__(self, args):
        self.args = args
        self.env = CueMemoryEnv(args.n_envs, args.episode_len, seed=args.seed + 1)
        self.actor = RecurrentNet(N_ACTIONS, args.hidden)
        self.critic = RecurrentNet(1, args.hidden)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=args.lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=args.lr)
        self.actor_h = torch.zeros(args.n_envs, args.hidden)
        self.critic_h = torch.zeros(args.n_envs, args.hidden)
        self.sample_gen = torch.Generator().manual_seed(args.seed + 2)
        self.obs = self.env.observe()

    def collect_rollout(self):
        # truncated BPTT: keep the carried hidden states, cut their graphs at the rollout boundary
        self.actor_h = self.actor_h.detach()
        self.critic_h = self.critic_h.detach()
        logps, entropies, values, rewards, dones = [], [], [], [], []
        for _ in range(self.args.rollout):
            logits, self.actor_h = self.actor(self.obs, self.actor_h)
            value, self.critic_h = self.critic(self.obs, self.critic_h)
            dist = torch.distributions.Categorical(logits=logits)
            action = torch.multinomial(dist.probs.detach(), 1, generator=self.sample_gen).squeeze(1)
            reward, done = self.env.step(action)
            logps.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            values.append(value.squeeze(1))
            rewards.append(reward)
            dones.append(done)
            keep = (1.0 - done)[:, None]            # new episode: forget the old cue
            self.actor_h = self.actor_h * keep
            self.critic_h = self.critic_h * keep
            self.obs = self.env.observe()
        with torch.no_grad():
            last_value = self.critic(self.obs, self.critic_h)[0].squeeze(1)
        return logps, entropies, values, rewards, dones, last_value

    def update(self, rollout):
        logps, entropies, values, rewards, dones, last_value = rollout
        ret, returns = last_value, []
        for r, d in zip(reversed(rewards), reversed(dones)):
            ret = r + self.args.gamma * (1.0 - d) * ret
            returns.append(ret)
        returns = torch.stack(returns[::-1])
        values, logps = torch.stack(values), torch.stack(logps)
        advantages = returns - values

        self.actor_opt.zero_grad()
        self.critic_opt.zero_grad()
        actor_loss = -(logps * advantages.detach()).mean() - self.args.ent_coef * torch.stack(entropies).mean()
        actor_loss.backward()
        self.actor_opt.step()
        critic_loss = advantages.pow(2).mean()
        critic_loss.backward()
        self.critic_opt.step()
        return actor_loss.item(), critic_loss.item(), torch.stack(rewards), torch.stack(dones)

    def fit(self):
        window = []
        for it in range(1, self.args.updates + 1):
            a_loss, c_loss, rewards, dones = self.update(self.collect_rollout())
            window.append((a_loss, c_loss, rewards.sum().item(), dones.sum().item()))
            if it % self.args.log_every == 0:
                n = len(window)
                succ = (sum(w[2] for w in window) / max(1.0, sum(w[3] for w in window)) + 1) / 2
                print(f"update {it} actor_loss {sum(w[0] for w in window) / n:.4f} "
                      f"critic_loss {sum(w[1] for w in window) / n:.4f} success {succ:.4f}")
                window = []

    @torch.no_grad()
    def evaluate(self, episodes=10):
        env = CueMemoryEnv(self.args.n_envs, self.args.episode_len, seed=999)
        env.t = torch.zeros(self.args.n_envs, dtype=torch.long)
        h = torch.zeros(self.args.n_envs, self.args.hidden)
        wins = 0.0
        for _ in range(episodes * self.args.episode_len):
            logits, h = self.actor(env.observe(), h)
            reward, done = env.step(logits.argmax(1))
            wins += ((reward > 0).float() * done).sum().item()
            h = h * (1.0 - done)[:, None]
        return wins / (episodes * self.args.n_envs)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--updates", type=int, default=200)
    p.add_argument("--rollout", type=int, default=4)
    p.add_argument("--episode-len", type=int, default=5)
    p.add_argument("--n-envs", type=int, default=32)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--gamma", type=float, default=0.9)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    trainer = A2CTrainer(args)
    trainer.fit()
    print(f"greedy success {trainer.evaluate():.4f}")
    params = [*trainer.actor.parameters(), *trainer.critic.parameters()]
    print(f"checksum {sum(p.abs().sum() for p in params).item():.4f}")


if __name__ == "__main__":
    main()
