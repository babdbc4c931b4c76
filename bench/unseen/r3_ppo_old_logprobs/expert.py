# Minimal PPO on a contextual bandit (synthetic observations, reward 1 when the
# action matches the hidden best arm). Based on the PPO reports where the old
# log-probabilities are kept with their graph, e.g.
# https://devgem.vercel.app/posts/how-to-fix-the-runtimeerror-trying-to-backward-through-the-graph-a-second-time-error-in-proximal-policy-optimization-ppo
# (retain_graph=True "fixes" it and then fails with the inplace-operation error) and
# https://github.com/ikostrikov/pytorch-a2c-ppo-acktr-gail/issues/284 (why old log-probs
# must not carry gradient).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(21)

OBS, ACTS, N = 8, 4, 128
K_EPOCHS, MINIBATCH, CLIP = 4, 32, 0.2

policy = nn.Sequential(nn.Linear(OBS, 32), nn.Tanh(), nn.Linear(32, ACTS))
critic = nn.Sequential(nn.Linear(OBS, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(list(policy.parameters()) + list(critic.parameters()), lr=3e-3)
W_true = torch.randn(OBS, ACTS)


def rollout():
    obs = torch.randn(N, OBS)
    dist = Categorical(logits=policy(obs))
    actions = dist.sample()
    old_log_probs = dist.log_prob(actions).detach()
    rewards = (actions == (obs @ W_true).argmax(-1)).float()
    return obs, actions, old_log_probs, rewards


for it in range(3):
    obs, actions, old_log_probs, rewards = rollout()
    with torch.no_grad():
        values = critic(obs).squeeze(-1)
    advantages = rewards - values
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    print(f"iter {it} mean reward {rewards.mean().item():.6f}")
    for epoch in range(K_EPOCHS):
        perm = torch.randperm(N)
        for start in range(0, N, MINIBATCH):
            mb = perm[start:start + MINIBATCH]
            dist = Categorical(logits=policy(obs[mb]))
            new_log_probs = dist.log_prob(actions[mb])
            ratio = torch.exp(new_log_probs - old_log_probs[mb])
            surr1 = ratio * advantages[mb]
            surr2 = torch.clamp(ratio, 1 - CLIP, 1 + CLIP) * advantages[mb]
            policy_loss = -torch.min(surr1, surr2).mean()
            value_loss = F.mse_loss(critic(obs[mb]).squeeze(-1), rewards[mb])
            loss = policy_loss + 0.5 * value_loss - 0.01 * dist.entropy().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"iter {it} epoch {epoch} loss {loss.item():.6f} ratio {ratio.mean().item():.6f}")
