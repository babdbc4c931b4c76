import copy

import torch

from .data import cutout
from .losses import smoothed_targets, soft_ce


class Trainer:
    def __init__(self, model, lr, smoothing, ema_decay, seed):
        self.model = model
        self.ema = copy.deepcopy(model)
        for p in self.ema.parameters():
            p.requires_grad_(False)
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
        self.smoothing, self.ema_decay = smoothing, ema_decay
        self.gen = torch.Generator().manual_seed(seed)
        self.running_loss, self.seen = 0.0, 0

    @torch.no_grad()
    def update_ema(self):
        for e, p in zip(self.ema.parameters(), self.model.parameters()):
            e.mul_(self.ema_decay).add_(p.detach(), alpha=1 - self.ema_decay)
        for e, b in zip(self.ema.buffers(), self.model.buffers()):
            e.copy_(b)

    def train_step(self, x, y):
        self.model.train()
        x = cutout(x, self.gen)
        x.add_(0.05 * torch.randn(x.shape, generator=self.gen))       # input noise, no grad needed
        loss = soft_ce(self.model(x), smoothed_targets(y, 3, self.smoothing))
        self.opt.zero_grad()
        loss.backward()
        for p in self.model.parameters():
            p.grad.clamp_(-1.0, 1.0)                                 # gradient value clipping
        self.opt.step()
        with torch.no_grad():
            self.model.fc2.weight.renorm_(2, 0, 3.0)                # max-norm constraint on the classifier rows
        self.update_ema()
        self.running_loss += loss.item() * len(y)
        self.seen += len(y)

    def fit(self, train, val, epochs, batch_size):
        for epoch in range(epochs):
            self.running_loss, self.seen = 0.0, 0
            perm = torch.randperm(len(train[0]), generator=self.gen)
            for idx in perm.split(batch_size):
                self.train_step(train[0][idx], train[1][idx])
            print(f"epoch {epoch} loss {self.running_loss / self.seen:.5f} "
                  f"val_acc {self.accuracy(self.model, *val):.4f} ema_acc {self.accuracy(self.ema, *val):.4f}")

    @staticmethod
    @torch.no_grad()
    def accuracy(model, x, y):
        model.eval()
        return (model(x).argmax(1) == y).float().mean().item()
