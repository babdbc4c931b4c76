import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


class PointMassEnv:
    """2-D point that should be driven to the origin; actions are bounded velocities."""

    def __init__(self, gen, horizon=20, max_action=2.0):
        self.gen, self.horizon, self.max_action = gen, horizon, max_action

    def reset(self):
        self.t = 0
        self.pos = 2.0 * torch.rand(2, generator=self.gen) - 1.0
        self.goal = 0.5 * (2.0 * torch.rand(2, generator=self.gen) - 1.0)
        return self._obs()

    def _obs(self):
        return torch.cat([self.pos, self.goal, torch.tensor([self.t / self.horizon])])

    def step(self, action):
        action = action.clamp(-self.max_action, self.max_action)
        self.pos = self.pos + 0.1 * action
        self.t += 1
        reward = -(self.pos - self.goal).pow(2).sum().item() - 0.01 * action.pow(2).sum().item()
        return self._obs(), reward, self.t >= self.horizon


def mlp(inp, out, hidden=48):
    return nn.Sequential(nn.Linear(inp, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, out))


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, max_action):
        super().__init__()
        self.net = mlp(obs_dim, 2 * act_dim)
        self.max_action = max_action

    def forward(self, obs):
        mu, log_std = self.net(obs).chunk(2, dim=-1)
        log_std = torch.clamp(log_std, LOG_STD_MIN, LOG_STD_MAX)
        return mu, log_std

    def sample(self, obs):
        mu, log_std = self(obs)
        normal = Normal(mu, log_std.exp())
        u = normal.rsample()
        y = torch.tanh(u)
        log_prob = normal.log_prob(u) - torch.log(self.max_action * (1 - y.pow(2)) + 1e-6)
        action = y.mul_(self.max_action)
        return action, log_prob.sum(-1, keepdim=True)

    @torch.no_grad()
    def act(self, obs, deterministic=False):
        if deterministic:
            mu, _ = self(obs)
            return torch.tanh(mu) * self.max_action
        return self.sample(obs)[0]


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.q1 = mlp(obs_dim + act_dim, 1)
        self.q2 = mlp(obs_dim + act_dim, 1)

    def forward(self, obs, act):
        oa = torch.cat([obs, act], dim=-1)
        return self.q1(oa), self.q2(oa)


class ReplayBuffer:
    def __init__(self, obs_dim, act_dim, size):
        self.obs = torch.zeros(size, obs_dim)
        self.act = torch.zeros(size, act_dim)
        self.rew = torch.zeros(size, 1)
        self.next_obs = torch.zeros(size, obs_dim)
        self.done = torch.zeros(size, 1)
        self.size, self.ptr, self.full = size, 0, False

    def add(self, o, a, r, o2, d):
        i = self.ptr
        self.obs[i], self.act[i], self.rew[i], self.next_obs[i], self.done[i] = o, a, r, o2, float(d)
        self.ptr = (self.ptr + 1) % self.size
        self.full = self.full or self.ptr == 0

    def sample(self, batch, gen):
        n = self.size if self.full else self.ptr
        idx = torch.randint(0, n, (batch,), generator=gen)
        return self.obs[idx], self.act[idx], self.rew[idx], self.next_obs[idx], self.done[idx]


class SAC:
    def __init__(self, obs_dim, act_dim, max_action, args):
        self.actor = Actor(obs_dim, act_dim, max_action)
        self.critic = Critic(obs_dim, act_dim)
        self.critic_target = copy.deepcopy(self.critic)
        for p in self.critic_target.parameters():
            p.requires_grad_(False)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -float(act_dim)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=args.lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=args.lr)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=args.lr)
        self.gamma, self.tau = args.gamma, args.tau

    @property
    def alpha(self):
        return self.log_alpha.exp().detach()

    def update(self, batch):
        obs, act, rew, next_obs, done = batch
        with torch.no_grad():
            next_a, next_logp = self.actor.sample(next_obs)
            tq1, tq2 = self.critic_target(next_obs, next_a)
            target = rew + self.gamma * (1 - done) * (torch.min(tq1, tq2) - self.alpha * next_logp)
        q1, q2 = self.critic(obs, act)
        critic_loss = F.mse_loss(q1, target) + F.mse_loss(q2, target)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()

        new_a, logp = self.actor.sample(obs)
        q1_pi, q2_pi = self.critic(obs, new_a)
        actor_loss = (self.alpha * logp - torch.min(q1_pi, q2_pi)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()

        alpha_loss = -(self.log_alpha * (logp + self.target_entropy)).mean()
        self.alpha_opt.zero_grad()
        alpha_loss.backward()
        self.alpha_opt.step()

        with torch.no_grad():
            for p, tp in zip(self.critic.parameters(), self.critic_target.parameters()):
                tp.mul_(1 - self.tau).add_(p, alpha=self.tau)
        return critic_loss.item(), actor_loss.item()


def evaluate(agent, env, episodes=5):
    total = 0.0
    for _ in range(episodes):
        obs, done = env.reset(), False
        while not done:
            obs, r, done = env.step(agent.actor.act(obs, deterministic=True))
            total += r
    return total / episodes


def main():
    p = argparse.ArgumentParser(description="Soft Actor-Critic with automatic entropy tuning")
    p.add_argument("--episodes", type=int, default=24)
    p.add_argument("--start-steps", type=int, default=80)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--gamma", type=float, default=0.95)
    p.add_argument("--tau", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    env = PointMassEnv(torch.Generator().manual_seed(args.seed))
    eval_env = PointMassEnv(torch.Generator().manual_seed(args.seed + 1))
    sample_gen = torch.Generator().manual_seed(args.seed + 2)
    agent = SAC(obs_dim=5, act_dim=2, max_action=env.max_action, args=args)
    buf = ReplayBuffer(5, 2, 5000)

    steps, closs, aloss = 0, float("nan"), float("nan")
    for ep in range(1, args.episodes + 1):
        obs, done, ep_ret = env.reset(), False, 0.0
        while not done:
            if steps < args.start_steps:
                act = (2.0 * torch.rand(2, generator=sample_gen) - 1.0) * env.max_action
            else:
                act = agent.actor.act(obs)
            next_obs, r, done = env.step(act)
            buf.add(obs, act, r, next_obs, done)
            obs, ep_ret, steps = next_obs, ep_ret + r, steps + 1
            if steps >= args.start_steps:
                closs, aloss = agent.update(buf.sample(args.batch_size, sample_gen))
        if ep % 8 == 0:
            print(f"episode {ep} return {ep_ret:.4f} critic_loss {closs:.4f} actor_loss {aloss:.4f} "
                  f"alpha {agent.alpha.item():.4f}")
    checksum = sum(p.abs().sum().item() for p in agent.actor.parameters())
    print(f"eval_return {evaluate(agent, eval_env):.4f} actor_checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
