# DDPG update on a synthetic replay batch (1-D action, reward peaked at a state-dependent
# action). Both losses are built first, then the critic is stepped, then the actor loss is
# backpropagated through the critic whose weights the step just changed. Based on
# https://github.com/kashif/firedup/issues/11 ("output 0 of TBackward, is at version 2;
# expected version 1" in DDPG after upgrading torch; "I reordered the two gradient update
# and it worked") and
# https://github.com/philtabor/Multi-Agent-Deep-Deterministic-Policy-Gradients/issues/2 .
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(23)

S, A, GAMMA, TAU = 4, 1, 0.9, 0.05


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(S + A, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], dim=1))


actor = nn.Sequential(nn.Linear(S, 64), nn.ReLU(), nn.Linear(64, A), nn.Tanh())
critic = Critic()
actor_t, critic_t = copy.deepcopy(actor), copy.deepcopy(critic)
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=2e-3)

states = torch.randn(512, S)
actions = torch.rand(512, A) * 2 - 1
best = torch.tanh(states[:, :1] - states[:, 1:2])
rewards = -(actions - best).pow(2)
next_states = states + 0.1 * torch.randn(512, S)

for it in range(25):
    idx = torch.randint(0, 512, (64,))
    s, a, r, s2 = states[idx], actions[idx], rewards[idx], next_states[idx]
    with torch.no_grad():
        target_q = r + GAMMA * critic_t(s2, actor_t(s2))
    critic_loss = F.mse_loss(critic(s, a), target_q)

    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    actor_loss = -critic(s, actor(s)).mean()

    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()

    with torch.no_grad():
        for net, tgt in ((actor, actor_t), (critic, critic_t)):
            for p, pt in zip(net.parameters(), tgt.parameters()):
                pt.mul_(1 - TAU).add_(TAU * p)
    if it % 3 == 0:
        print(f"it {it} critic {critic_loss.item():.6f} actor {actor_loss.item():.6f}")
