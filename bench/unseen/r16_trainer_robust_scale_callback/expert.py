"""Robust regression with the Welsch (correntropy) loss. Its scale is re-estimated after
every epoch from the residuals of that epoch (MAD estimator), by a callback of a small
hand-written Trainer."""
import torch
import torch.nn as nn

HPARAMS = {"seed": 0, "n": 600, "in_dim": 6, "outliers": 0.15, "epochs": 4,
           "batch": 50, "lr": 0.02, "init_scale": 1.0, "log_every": 12}


def welsch(residual, scale):
    z = (residual / scale) ** 2
    return (scale ** 2 / 2 * (1 - torch.exp(-z))).mean()


class Callback:
    def on_epoch_start(self, trainer): pass
    def on_batch_end(self, trainer, outputs): pass
    def on_epoch_end(self, trainer): pass


class RobustScaleCallback(Callback):
    """MAD estimate of the residual scale over the last epoch."""

    def on_epoch_start(self, trainer):
        self.residuals = []

    def on_batch_end(self, trainer, outputs):
        self.residuals.append(outputs["residual"].detach().abs())  # a statistic, not a graph

    def on_epoch_end(self, trainer):
        trainer.scale = 1.4826 * torch.cat(self.residuals).median()


class PrintLogger(Callback):
    def __init__(self, every):
        self.every = every

    def on_batch_end(self, trainer, outputs):
        if trainer.step % self.every == 0:
            print(f"epoch {trainer.epoch} step {trainer.step:3d} loss {outputs['loss'].item():.5f}")

    def on_epoch_end(self, trainer):
        print(f"epoch {trainer.epoch} new scale {float(trainer.scale):.5f}")


class Trainer:
    def __init__(self, model, opt, callbacks, init_scale):
        self.model, self.opt, self.callbacks = model, opt, callbacks
        self.scale = init_scale
        self.step = 0

    def _emit(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def train_step(self, xb, yb):
        residual = self.model(xb).squeeze(-1) - yb
        loss = welsch(residual, self.scale)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return {"loss": loss, "residual": residual}

    def fit(self, x, y, epochs, batch):
        for self.epoch in range(epochs):
            self._emit("on_epoch_start")
            perm = torch.randperm(x.shape[0])
            for i in range(0, x.shape[0], batch):
                idx = perm[i:i + batch]
                outputs = self.train_step(x[idx], y[idx])
                self.step += 1
                self._emit("on_batch_end", outputs)
            self._emit("on_epoch_end")


def make_data(hp):
    g = torch.Generator().manual_seed(17)
    x = torch.randn(hp["n"], hp["in_dim"], generator=g)
    w = torch.randn(hp["in_dim"], generator=g)
    y = torch.sin(x @ w) + 0.5 * x[:, 0] + 0.1 * torch.randn(hp["n"], generator=g)
    bad = torch.rand(hp["n"], generator=g) < hp["outliers"]
    y[bad] += 6.0 * torch.randn(int(bad.sum()), generator=g)
    return x, y, bad


def main():
    hp = HPARAMS
    torch.manual_seed(hp["seed"])
    x, y, bad = make_data(hp)
    model = nn.Sequential(nn.Linear(hp["in_dim"], 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.Adam(model.parameters(), lr=hp["lr"])
    trainer = Trainer(model, opt, [RobustScaleCallback(), PrintLogger(hp["log_every"])],
                      hp["init_scale"])
    trainer.fit(x, y, hp["epochs"], hp["batch"])
    with torch.no_grad():
        err = (model(x).squeeze(-1) - y).abs()
    print(f"clean MAE {err[~bad].mean().item():.5f}  outlier MAE {err[bad].mean().item():.5f}")


if __name__ == "__main__":
    main()
