# Gaussian policy pre-trained by behaviour cloning (maximum likelihood of expert actions).
# The network outputs means and log-stds in one tensor, split with chunk, and the log-stds
# are clamped in place. Based on https://github.com/toshikwa/gail-airl-ppo.pytorch/issues/13
# ("Output 1 of SplitBackward0 is a view and is being modified inplace" from
# `log_stds.clamp_(-20, 2)` after `self.net(states).chunk(2, dim=-1)`).
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(14)

S, A = 6, 2
LOG_STD_MIN, LOG_STD_MAX = -1.5, 2.0


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(S, 64), nn.Tanh(), nn.Linear(64, 2 * A))

    def forward(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        log_stds.clamp_(LOG_STD_MIN, LOG_STD_MAX)
        return means, log_stds


policy = GaussianPolicy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
states = torch.randn(256, S)
W = torch.randn(S, A) * 0.5
expert_actions = torch.tanh(states @ W) + 0.05 * torch.randn(256, A)

for step in range(24):
    idx = torch.randint(0, 256, (64,))
    means, log_stds = policy(states[idx])
    nll = -Normal(means, log_stds.exp()).log_prob(expert_actions[idx]).sum(-1).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} nll {nll.item():.6f} min log_std {log_stds.min().item():.6f}")
