import torch


class RolloutBuffer:
    def __init__(self):
        self.logps, self.values, self.rewards, self.dones, self.entropies = [], [], [], [], []

    def add(self, logp, value, reward, done, entropy):
        self.logps.append(logp)
        self.values.append(value)
        self.rewards.append(reward)
        self.dones.append(done)
        self.entropies.append(entropy)

    def compute_gae(self, last_value, gamma, lam):
        values = torch.stack(self.values + [last_value]).detach()
        rewards, dones = torch.stack(self.rewards), torch.stack(self.dones)
        T = rewards.shape[0]
        adv = torch.zeros_like(rewards)
        last = torch.zeros_like(rewards[0])
        for t in reversed(range(T)):
            nonterminal = 1.0 - dones[t]
            delta = rewards[t] + gamma * values[t + 1] * nonterminal - values[t]
            last = delta + gamma * lam * nonterminal * last
            adv[t] = last
        returns = adv + values[:-1]
        return adv, returns

    def tensors(self):
        return torch.stack(self.logps), torch.stack(self.values), torch.stack(self.entropies)
