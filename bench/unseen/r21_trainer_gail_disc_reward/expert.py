"""GAIL on a toy 2-D point-mass task (continuous control), organised as a Trainer.

Each iteration: roll out the Gaussian policy, label the transitions with the
discriminator reward r(s, a) = -log(1 - D(s, a)), train the discriminator
(expert = 1, policy = 0), then do an advantage actor-critic update of the policy.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

S_DIM, A_DIM, HORIZON, N_ENVS = 4, 2, 12, 16
A_MAT = torch.tensor([[1.0, 0.0, 0.1, 0.0],
                      [0.0, 1.0, 0.0, 0.1],
                      [0.0, 0.0, 0.9, 0.0],
                      [0.0, 0.0, 0.0, 0.9]])
B_MAT = torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.1, 0.0], [0.0, 0.1]])
K_EXPERT = torch.tensor([[1.0, 0.0, 1.5, 0.0], [0.0, 1.0, 0.0, 1.5]])


def env_step(s, a):
    return s @ A_MAT.t() + a.clamp(-2, 2) @ B_MAT.t()


def expert_demos(n=256, seed=0):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(n // HORIZON, S_DIM, generator=g)
    states, actions = [], []
    for _ in range(HORIZON):
        a = -s @ K_EXPERT.t() + 0.05 * torch.randn(s.shape[0], A_DIM, generator=g)
        states.append(s)
        actions.append(a)
        s = env_step(s, a)
    return torch.cat(states), torch.cat(actions)


def mlp(i, o, h=32):
    return nn.Sequential(nn.Linear(i, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh(), nn.Linear(h, o))


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = mlp(S_DIM, A_DIM)
        self.log_std = nn.Parameter(torch.full((A_DIM,), -0.5))

    def dist(self, s):
        return torch.distributions.Normal(self.mu(s), self.log_std.exp())


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp(S_DIM + A_DIM, 1)

    def forward(self, s, a):
        return self.net(torch.cat([s, a], dim=-1)).squeeze(-1)


class PrintCallback:
    def on_iteration_end(self, trainer, it, logs):
        trainer.log_rows.append(logs)


class GAILTrainer:
    def __init__(self, gamma=0.95, callbacks=()):
        self.policy, self.value, self.disc = Policy(), mlp(S_DIM, 1), Discriminator()
        self.pi_opt = torch.optim.Adam(list(self.policy.parameters()) + list(self.value.parameters()), lr=3e-3)
        self.d_opt = torch.optim.Adam(self.disc.parameters(), lr=3e-3)
        self.gamma = gamma
        self.callbacks = list(callbacks)
        self.expert_s, self.expert_a = expert_demos()
        self.gen = torch.Generator().manual_seed(123)
        self.log_rows = []

    @torch.no_grad()
    def reward(self, s, a):
        logits = self.disc(s, a)
        return -F.logsigmoid(-logits)          # = -log(1 - D(s, a))

    def collect(self):
        s = torch.randn(N_ENVS, S_DIM, generator=self.gen)
        states, actions, rewards = [], [], []
        for _ in range(HORIZON):
            with torch.no_grad():
                mu = self.policy.mu(s)
                a = mu + self.policy.log_std.exp() * torch.randn(mu.shape, generator=self.gen)
            states.append(s)
            actions.append(a)
            rewards.append(self.reward(s, a))
            s = env_step(s, a)
        return torch.stack(states), torch.stack(actions), torch.stack(rewards)

    def update_discriminator(self, states, actions):
        s, a = states.reshape(-1, S_DIM), actions.reshape(-1, A_DIM)
        idx = torch.randint(0, self.expert_s.shape[0], (s.shape[0],), generator=self.gen)
        real = self.disc(self.expert_s[idx], self.expert_a[idx])
        fake = self.disc(s, a)
        loss = F.binary_cross_entropy_with_logits(real, torch.ones_like(real)) + \
            F.binary_cross_entropy_with_logits(fake, torch.zeros_like(fake))
        self.d_opt.zero_grad()
        loss.backward()
        self.d_opt.step()
        return loss.item()

    def discounted_returns(self, rewards):
        ret, out = torch.zeros_like(rewards[0]), []
        for t in reversed(range(rewards.shape[0])):
            ret = rewards[t] + self.gamma * ret
            out.append(ret)
        return torch.stack(out[::-1])

    def update_policy(self, states, actions, rewards):
        returns = self.discounted_returns(rewards)
        values = self.value(states).squeeze(-1)
        adv = returns - values.detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        logp = self.policy.dist(states).log_prob(actions).sum(-1)
        pi_loss = -(logp * adv).mean()
        v_loss = F.mse_loss(values, returns)
        self.pi_opt.zero_grad()
        (pi_loss + 0.5 * v_loss).backward()
        self.pi_opt.step()
        return pi_loss.item(), v_loss.item()

    def train_step(self, it):
        states, actions, rewards = self.collect()
        d_loss = self.update_discriminator(states, actions)
        pi_loss, v_loss = self.update_policy(states, actions, rewards)
        logs = dict(it=it, d_loss=d_loss, pi_loss=pi_loss, v_loss=v_loss,
                    reward=rewards.mean().item())
        for cb in self.callbacks:
            cb.on_iteration_end(self, it, logs)

    def fit(self, iters):
        for it in range(iters):
            self.train_step(it)


def main():
    torch.manual_seed(0)
    trainer = GAILTrainer(callbacks=[PrintCallback()])
    trainer.fit(15)
    for row in trainer.log_rows[-3:]:
        print(f"it {row['it']:2d} d_loss {row['d_loss']:.6f} pi_loss {row['pi_loss']:.6f} "
              f"v_loss {row['v_loss']:.6f} reward {row['reward']:.6f}")
    with torch.no_grad():
        s = trainer.expert_s[:64]
        imitation_err = (trainer.policy.mu(s) - (-s @ K_EXPERT.t())).pow(2).mean().item()
    print(f"imitation error: {imitation_err:.6f}")
    cs = sum(p.detach().double().sum().item() for p in trainer.policy.parameters())
    print(f"policy checksum: {cs:.6f}")


if __name__ == "__main__":
    main()
