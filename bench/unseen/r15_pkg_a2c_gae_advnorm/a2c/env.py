import torch


class ChainEnv:
    """Batched 1-D chain: start in the middle, +1 at the right end, -0.5 at the left end,
    -0.01 per step; episodes also end after `max_steps`."""

    def __init__(self, n_envs, length=7, max_steps=20):
        self.n, self.L, self.max_steps = n_envs, length, max_steps
        self.pos = torch.full((n_envs,), length // 2)
        self.t = torch.zeros(n_envs, dtype=torch.long)

    def obs(self):
        o = torch.zeros(self.n, self.L + 1)
        o[torch.arange(self.n), self.pos] = 1.0
        o[:, -1] = self.t.float() / self.max_steps
        return o

    def step(self, action):
        self.pos = (self.pos + action * 2 - 1).clamp(0, self.L - 1)
        self.t += 1
        reward = torch.full((self.n,), -0.01)
        reward[self.pos == self.L - 1] = 1.0
        reward[self.pos == 0] = -0.5
        done = (self.pos == 0) | (self.pos == self.L - 1) | (self.t >= self.max_steps)
        self.pos[done] = self.L // 2
        self.t[done] = 0
        return self.obs(), reward, done.float()
