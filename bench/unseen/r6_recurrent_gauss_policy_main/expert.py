"""REINFORCE with a recurrent Gaussian policy on a noisy 1-D tracking task, updated every
`--window` steps (truncated backprop through the policy's GRU state)."""
import argparse
import math

import torch
import torch.nn as nn
from torch.distributions import Normal


class RecurrentGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, hidden):
        super().__init__()
        self.cell = nn.GRUCell(obs_dim, hidden)
        self.head = nn.Linear(hidden, 2)
        self.hidden = hidden

    def initial_state(self, n):
        return torch.zeros(n, self.hidden)

    def forward(self, obs, h):
        h = self.cell(obs, h)
        mu, log_std = self.head(h).chunk(2, dim=-1)
        log_std = log_std.clamp(-3.0, 1.0)
        return Normal(mu.squeeze(-1), log_std.exp().squeeze(-1)), h


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_envs", type=int, default=32)
    parser.add_argument("--episode_len", type=int, default=64)
    parser.add_argument("--window", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--obs_noise", type=float, default=0.3)
    args = parser.parse_args()

    torch.manual_seed(0)
    policy = RecurrentGaussianPolicy(obs_dim=2, hidden=args.hidden)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)

    for it in range(args.iterations):
        phase = 2 * math.pi * torch.rand(args.n_envs)
        speed = 0.1 + 0.1 * torch.rand(args.n_envs)
        pos = torch.zeros(args.n_envs)
        h = policy.initial_state(args.n_envs)
        ep_reward = 0.0
        for start in range(0, args.episode_len, args.window):
            log_probs, rewards = [], []
            h = h.detach()
            for t in range(start, start + args.window):
                target = torch.sin(phase + speed * t)
                obs = torch.stack([target - pos + args.obs_noise * torch.randn(args.n_envs),
                                   torch.full((args.n_envs,), t / args.episode_len)], dim=1)
                dist, h = policy(obs, h)
                action = dist.sample()
                pos = pos + 0.3 * action.clamp(-1, 1)
                rewards.append(-(torch.sin(phase + speed * (t + 1)) - pos) ** 2)
                log_probs.append(dist.log_prob(action))
            rewards = torch.stack(rewards)
            returns = rewards.flip(0).cumsum(0).flip(0)
            advantages = (returns - returns.mean(dim=1, keepdim=True)) / (returns.std() + 1e-6)
            loss = -(torch.stack(log_probs) * advantages).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ep_reward += rewards.sum(0).mean().item()
        with torch.no_grad():
            std = policy.head.bias[1].clamp(-3.0, 1.0).exp().item()
        print(f"iter {it} episode reward {ep_reward:.4f} std(bias) {std:.4f}")

    print(f"checksum {sum(p.sum().item() for p in policy.parameters()):.4f}")


if __name__ == "__main__":
    main()
