import torch


class PointMass:
    """Push a unit mass towards the origin.  obs = (x, y, vx, vy), action = force in [-1, 1]^2."""

    obs_dim, act_dim = 4, 2

    def __init__(self, seed=0, dt=0.1, max_steps=40):
        self.g = torch.Generator().manual_seed(seed)
        self.dt, self.max_steps = dt, max_steps

    def reset(self):
        self.t = 0
        pos = torch.rand(2, generator=self.g) * 4 - 2
        self.state = torch.cat([pos, torch.zeros(2)])
        return self.state.clone()

    def step(self, action):
        a = torch.as_tensor(action, dtype=torch.float32).clamp(-1.0, 1.0)
        pos, vel = self.state[:2], self.state[2:]
        vel = 0.95 * vel + a * self.dt
        pos = pos + vel * self.dt
        self.state = torch.cat([pos, vel])
        self.t += 1
        dist = pos.norm().item()
        reward = -dist - 0.05 * float((a ** 2).sum())
        done = self.t >= self.max_steps
        return self.state.clone(), reward, done
