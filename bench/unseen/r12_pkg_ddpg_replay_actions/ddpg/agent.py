import copy

import torch
import torch.nn.functional as F

from .networks import Actor, Critic


class DDPGAgent:
    def __init__(self, obs_dim, act_dim, cfg):
        self.cfg = cfg
        self.actor = Actor(obs_dim, act_dim, cfg.hidden)
        self.critic = Critic(obs_dim, act_dim, cfg.hidden)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr)
        self.act_dim = act_dim

    def act(self, obs, noise_scale):
        action = self.actor(obs)
        if noise_scale > 0:
            action = action + noise_scale * torch.randn(self.act_dim)
        return action.clamp(-1.0, 1.0)

    def update(self, batch):
        obs, act, rew, next_obs, done = batch
        with torch.no_grad():
            next_q = self.critic_target(next_obs, self.actor_target(next_obs))
            target_q = rew + self.cfg.gamma * (1.0 - done) * next_q

        critic_loss = F.mse_loss(self.critic(obs, act), target_q)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()

        actor_loss = -self.critic(obs, self.actor(obs)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()

        self.soft_update(self.actor, self.actor_target)
        self.soft_update(self.critic, self.critic_target)
        return critic_loss.item(), actor_loss.item()

    @torch.no_grad()
    def soft_update(self, net, target):
        for p, tp in zip(net.parameters(), target.parameters()):
            tp.mul_(1.0 - self.cfg.tau).add_(p, alpha=self.cfg.tau)
