# Synchronous advantage actor-critic (A2C) with separate actor and critic networks and
# optimizers, on a batch of 1-D "reach the goal" environments.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)

N_ENVS = 16
N_STEPS = 5
UPDATES = 40
GAMMA = 0.9
ENT_COEF = 0.01
ACTOR_LR = 3e-3
CRITIC_LR = 1e-2
WORLD = 6  # positions -WORLD..WORLD


class VecWalk:
    """Batch of walks on a line; actions: 0 = left, 1 = stay, 2 = right."""

    def __init__(self, n):
        self.n = n
        self.pos = torch.randint(-WORLD, WORLD + 1, (n,)).float()
        self.goal = torch.randint(-WORLD, WORLD + 1, (n,)).float()

    def obs(self):
        return torch.stack([self.pos / WORLD, self.goal / WORLD, (self.goal - self.pos) / WORLD], dim=1)

    def step(self, actions):
        self.pos = (self.pos + actions.float() - 1).clamp(-WORLD, WORLD)
        dist = (self.pos - self.goal).abs()
        reward = -0.1 * dist + (dist == 0).float()
        done = dist == 0
        # reached goals get a new random goal
        new_goal = torch.randint(-WORLD, WORLD + 1, (self.n,)).float()
        self.goal = torch.where(done, new_goal, self.goal)
        return self.obs(), reward, done


def mlp(out_dim):
    return nn.Sequential(nn.Linear(3, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, out_dim))


actor = mlp(3)
critic = mlp(1)
actor_opt = torch.optim.Adam(actor.parameters(), lr=ACTOR_LR)
critic_opt = torch.optim.Adam(critic.parameters(), lr=CRITIC_LR)
env = VecWalk(N_ENVS)
obs = env.obs()

for update in range(UPDATES):
    log_probs, values, rewards, masks, entropies = [], [], [], [], []
    for _ in range(N_STEPS):
        dist = Categorical(logits=actor(obs))
        action = dist.sample()
        value = critic(obs).squeeze(-1)
        obs, reward, done = env.step(action)
        log_probs.append(dist.log_prob(action))
        entropies.append(dist.entropy())
        values.append(value)
        rewards.append(reward)
        masks.append(1.0 - done.float())

    with torch.no_grad():
        R = critic(obs).squeeze(-1)
    returns = []
    for t in reversed(range(N_STEPS)):
        R = rewards[t] + GAMMA * R * masks[t]
        returns.insert(0, R)

    log_probs = torch.stack(log_probs)
    values = torch.stack(values)
    returns = torch.stack(returns)
    entropy = torch.stack(entropies).mean()

    advantage = returns - values
    actor_loss = -(log_probs * advantage).mean() - ENT_COEF * entropy
    critic_loss = advantage.pow(2).mean()

    actor_opt.zero_grad()
    critic_opt.zero_grad()
    actor_loss.backward()
    critic_loss.backward()
    actor_opt.step()
    critic_opt.step()
    print(f"update {update} actor {actor_loss.item():.6f} critic {critic_loss.item():.6f} "
          f"reward {torch.stack(rewards).mean().item():.6f}")

print(f"{sum(p.double().sum().item() for p in list(actor.parameters()) + list(critic.parameters())):.6f}")
