"""Tabular classifier trained with a small Trainer; callbacks keep a confusion matrix and an EMA of the weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Callback:
    def on_batch_end(self, trainer, logits, y):
        pass

    def on_epoch_end(self, trainer, epoch):
        pass


class ConfusionMatrix(Callback):
    def __init__(self, n_classes):
        self.n = n_classes
        self.cm = torch.zeros(n_classes, n_classes, dtype=torch.long)

    def on_batch_end(self, trainer, logits, y):
        pred = logits.detach().argmax(-1)
        self.cm.index_put_((y, pred), torch.ones(len(y)), accumulate=True)

    def on_epoch_end(self, trainer, epoch):
        recall = self.cm.diag().float() / self.cm.sum(1).clamp(min=1)
        trainer.logs.append(("recall", recall.mean().item()))
        self.cm.zero_()


class EMAWeights(Callback):
    def __init__(self, model, decay=0.9):
        self.decay = decay
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def on_batch_end(self, trainer, logits, y):
        with torch.no_grad():
            for k, v in trainer.model.state_dict().items():
                if v.dtype.is_floating_point:
                    self.shadow[k].mul_(self.decay).add_(v, alpha=1 - self.decay)


class Net(nn.Module):
    def __init__(self, d_in, n_classes, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.bn = nn.BatchNorm1d(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, x):
        h = F.relu(self.bn(self.fc1(x)), inplace=True)
        r = self.fc2(h)
        r += h                                   # residual
        return self.out(F.relu(r))


class Trainer:
    def __init__(self, model, lr=1e-2, callbacks=()):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.callbacks = list(callbacks)
        self.logs = []

    def train_step(self, x, y):
        self.model.train()
        x = x.clone()
        x[:, 0].clamp_(-3.0, 3.0)                # winsorise the heavy-tailed feature
        logits = self.model(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.05)
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        for cb in self.callbacks:
            cb.on_batch_end(self, logits, y)
        return loss.item()

    def fit(self, x, y, epochs=3, batch=32, seed=1):
        g = torch.Generator().manual_seed(seed)
        for epoch in range(epochs):
            perm = torch.randperm(len(x), generator=g)
            losses = [self.train_step(x[perm[i:i + batch]], y[perm[i:i + batch]])
                      for i in range(0, len(x), batch)]
            self.logs.append(("loss", sum(losses) / len(losses)))
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    n, d, k = 256, 10, 4
    w = torch.randn(d, k, generator=g)
    x = torch.randn(n, d, generator=g)
    x[:, 0] = x[:, 0] ** 3
    y = (x @ w + 0.5 * torch.randn(n, k, generator=g)).argmax(-1)
    model = Net(d, k)
    trainer = Trainer(model, callbacks=[ConfusionMatrix(k), EMAWeights(model)])
    trainer.fit(x, y, epochs=3)
    for name, value in trainer.logs:
        print(f"{name} {value:.6f}")
    print(f"param checksum: {sum(p.detach().double().pow(2).sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
