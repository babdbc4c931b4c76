"""Trainer with a hand-written SGD (gradient centralization + decoupled weight decay)
and a loss-history callback that up-weights hard examples."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer


class GCSGD(Optimizer):
    """SGD with momentum, Gradient Centralization (Yong et al. 2020) and decoupled weight decay."""

    def __init__(self, params, lr=0.05, momentum=0.9, weight_decay=1e-3):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if g.dim() > 1:  # centralize weight gradients
                    g = g - g.mean(dim=tuple(range(1, g.dim())), keepdim=True)
                state = self.state[p]
                if "buf" not in state:
                    state["buf"] = torch.clone(g).detach()
                else:
                    state["buf"].mul_(group["momentum"]).add_(g)
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(state["buf"], alpha=-group["lr"])


class Callback:
    def on_loss(self, trainer, idx, losses, weights):
        return weights

    def on_step_end(self, trainer, step, loss):
        pass


class HardExampleReweighting(Callback):
    """Keeps an EMA of each sample's loss and softmax-weights the batch by it."""

    def __init__(self, n_samples, temperature=0.5, beta=0.8):
        self.hist = torch.zeros(n_samples)
        self.temperature = temperature
        self.beta = beta

    def on_loss(self, trainer, idx, losses, weights):
        w = torch.softmax(self.hist[idx] / self.temperature, dim=0) * len(idx)
        self.hist[idx] = self.beta * self.hist[idx] + (1 - self.beta) * losses.detach()
        return weights * w


class PrintLogger(Callback):
    def __init__(self, every):
        self.every = every

    def on_step_end(self, trainer, step, loss):
        if step % self.every == 0 or step == trainer.max_steps - 1:
            print(f"step {step} loss {loss:.6f}")


class Trainer:
    def __init__(self, model, optimizer, callbacks, max_steps, batch_size):
        self.model = model
        self.optimizer = optimizer
        self.callbacks = callbacks
        self.max_steps = max_steps
        self.batch_size = batch_size

    def train_step(self, idx, x, y):
        losses = F.cross_entropy(self.model(x), y, reduction="none")
        weights = torch.ones_like(losses)
        for cb in self.callbacks:
            weights = cb.on_loss(self, idx, losses, weights)
        loss = (weights * losses).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, X, y):
        g = torch.Generator().manual_seed(1)
        for step in range(self.max_steps):
            idx = torch.randint(0, X.size(0), (self.batch_size,), generator=g)
            loss = self.train_step(idx, X[idx], y[idx])
            for cb in self.callbacks:
                cb.on_step_end(self, step, loss)


def main():
    torch.manual_seed(0)
    X = torch.randn(256, 8)
    y = (X[:, :3].sum(1) > 0).long() + (X[:, 3] > 0.8).long()
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = GCSGD(model.parameters(), lr=0.05)
    cbs = [HardExampleReweighting(X.size(0)), PrintLogger(10)]
    trainer = Trainer(model, opt, cbs, max_steps=40, batch_size=64)
    trainer.fit(X, y)
    with torch.no_grad():
        acc = (model(X).argmax(1) == y).float().mean().item()
    print(f"acc {acc:.6f}")
    print(f"hist sum {cbs[0].hist.sum().item():.6f}")
    print(f"checksum {sum(p.sum() for p in model.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
