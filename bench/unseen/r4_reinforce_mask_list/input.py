# REINFORCE with invalid-action masking on a small synthetic "route" environment,
# written after pytorch/examples' reinforcement_learning/reinforce.py.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

parser = argparse.ArgumentParser()
parser.add_argument("--gamma", type=float, default=0.95)
parser.add_argument("--lr", type=float, default=1e-2)
parser.add_argument("--episodes", type=int, default=30)
parser.add_argument("--horizon", type=int, default=10)
args = parser.parse_args()

torch.manual_seed(0)

N_STATES = 8
N_ACTIONS = 6
OBS_DIM = N_STATES + 4


class RouteEnv:
    """Each state allows only some of the actions; moving pays a state/action reward."""

    def __init__(self, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.payoff = torch.randn(N_STATES, N_ACTIONS, generator=g)
        legal = torch.rand(N_STATES, N_ACTIONS, generator=g) < 0.6
        legal[:, 0] = True  # "wait" is always allowed
        self.legal = legal
        self.features = torch.randn(N_STATES, 4, generator=g)
        self.g = g

    def reset(self):
        self.state = int(torch.randint(0, N_STATES, (1,), generator=self.g))
        return self.obs()

    def obs(self):
        onehot = F.one_hot(torch.tensor(self.state), N_STATES).float()
        return torch.cat([onehot, self.features[self.state]])

    def legal_actions(self):
        return self.legal[self.state]

    def step(self, action):
        reward = float(self.payoff[self.state, action]) + 0.1 * float(torch.randn(1, generator=self.g))
        self.state = (self.state + action) % N_STATES
        return self.obs(), reward


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(OBS_DIM, 64)
        self.affine2 = nn.Linear(64, N_ACTIONS)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x, legal):
        x = F.relu(self.affine1(x))
        probs = F.softmax(self.affine2(x), dim=-1)
        probs[~legal] = 0.0                      # never pick an illegal move
        return probs / probs.sum(dim=-1, keepdim=True)


env = RouteEnv()
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
eps = 1e-6


def select_action(state, legal):
    probs = policy(state, legal)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.stack(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    return policy_loss.item()


for i_episode in range(args.episodes):
    state = env.reset()
    ep_reward = 0.0
    for t in range(args.horizon):
        action = select_action(state, env.legal_actions())
        state, reward = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
    loss = finish_episode()
    print(f"episode {i_episode} reward {ep_reward:.6f} loss {loss:.6f}")

print(f"{sum(p.double().sum().item() for p in policy.parameters()):.6f}")
