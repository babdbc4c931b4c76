import torch


class ReplayBuffer:
    def __init__(self, capacity, seed=0):
        self.capacity = capacity
        self.storage = []
        self.pos = 0
        self.g = torch.Generator().manual_seed(seed)

    def push(self, obs, action, reward, next_obs, done):
        item = (obs, action, torch.tensor(reward), next_obs, torch.tensor(float(done)))
        if len(self.storage) < self.capacity:
            self.storage.append(item)
        else:
            self.storage[self.pos] = item
        self.pos = (self.pos + 1) % self.capacity

    def sample(self, batch_size):
        idx = torch.randint(0, len(self.storage), (batch_size,), generator=self.g).tolist()
        obs, act, rew, nxt, done = zip(*(self.storage[i] for i in idx))
        return (torch.stack(obs), torch.stack(act), torch.stack(rew).unsqueeze(1),
                torch.stack(nxt), torch.stack(done).unsqueeze(1))

    def __len__(self):
        return len(self.storage)
