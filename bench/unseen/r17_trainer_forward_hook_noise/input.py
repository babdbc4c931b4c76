"""MLP classifier regularised with multiplicative Gaussian noise on the hidden
activations (Gaussian dropout), injected by forward hooks that the Trainer
installs on every ReLU.  Gradient accumulation over two micro-batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n, gen, d=16, k=4):
    w = torch.randn(d, k, generator=torch.Generator().manual_seed(123))
    x = torch.randn(n, d, generator=gen)
    logits = x @ w + 0.5 * torch.randn(n, k, generator=gen)
    return x, logits.argmax(1)


class Trainer:
    def __init__(self, model, sigma=0.5, lr=3e-3, accum_steps=2, micro_batch=32, seed=0):
        self.model = model
        self.sigma = sigma
        self.accum_steps = accum_steps
        self.micro_batch = micro_batch
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.noise_gen = torch.Generator().manual_seed(seed + 7)
        self.handles = [m.register_forward_hook(self._noise_hook)
                        for m in model.modules() if isinstance(m, nn.ReLU)]

    def _noise_hook(self, module, inputs, output):
        if module.training:
            noise = 1.0 + self.sigma * torch.randn(output.shape, generator=self.noise_gen)
            output.mul_(noise)

    def step(self, xb, yb, do_update):
        loss = F.cross_entropy(self.model(xb), yb) / self.accum_steps
        loss.backward()
        if do_update:
            self.opt.step()
            self.opt.zero_grad()
        return loss.item() * self.accum_steps

    def train_epoch(self, x, y, gen):
        self.model.train()
        perm = torch.randperm(x.shape[0], generator=gen)
        losses = []
        for i, start in enumerate(range(0, x.shape[0], self.micro_batch)):
            idx = perm[start:start + self.micro_batch]
            losses.append(self.step(x[idx], y[idx], do_update=(i + 1) % self.accum_steps == 0))
        return sum(losses) / len(losses)

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        out = self.model(x)
        return F.cross_entropy(out, y).item(), (out.argmax(1) == y).float().mean().item()

    def fit(self, train, val, epochs, gen):
        for epoch in range(epochs):
            tr = self.train_epoch(*train, gen)
            vl, va = self.evaluate(*val)
            print(f"epoch {epoch} train {tr:.5f} val {vl:.5f} acc {va:.5f}")


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    train = make_data(512, gen)
    val = make_data(256, gen)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
    Trainer(model).fit(train, val, epochs=3, gen=gen)


if __name__ == "__main__":
    main()
