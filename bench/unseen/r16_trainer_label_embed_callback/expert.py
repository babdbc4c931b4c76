"""Zero-shot style classifier: features are matched against embeddings of class
descriptions produced by a trainable label encoder. Small hand-written Trainer with
callbacks."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = {
    "seed": 0,
    "n_classes": 6,
    "desc_len": 5,
    "vocab": 40,
    "in_dim": 16,
    "dim": 24,
    "tau": 0.2,
    "epochs": 3,
    "batch": 48,
    "lr": 0.1,
}


class DualEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.feat = nn.Sequential(nn.Linear(cfg["in_dim"], 32), nn.GELU(), nn.Linear(32, cfg["dim"]))
        self.bag = nn.EmbeddingBag(cfg["vocab"], 32, mode="mean")
        self.proj = nn.Linear(32, cfg["dim"])
        self.tau = cfg["tau"]
        self.class_emb = None  # filled by LabelCacheCallback

    def encode_labels(self, tokens):
        return F.normalize(self.proj(torch.tanh(self.bag(tokens))), dim=-1)

    def forward(self, x):
        f = F.normalize(self.feat(x), dim=-1)
        return f @ self.class_emb.t() / self.tau


class Callback:
    def on_fit_start(self, trainer): pass
    def on_epoch_start(self, trainer): pass
    def on_batch_start(self, trainer): pass
    def on_batch_end(self, trainer, loss): pass
    def on_epoch_end(self, trainer): pass


class LabelCacheCallback(Callback):
    """Encode the class descriptions before every batch: the label encoder is
    trained, so its outputs (and their graph) must be fresh for each step."""

    def on_batch_start(self, trainer):
        trainer.model.class_emb = trainer.model.encode_labels(trainer.label_tokens)


class PrintLogger(Callback):
    def __init__(self, every):
        self.every = every

    def on_batch_end(self, trainer, loss):
        if trainer.step % self.every == 0:
            print(f"epoch {trainer.epoch} step {trainer.step:3d} loss {loss.item():.5f}")

    def on_epoch_end(self, trainer):
        with torch.no_grad():
            emb = trainer.model.encode_labels(trainer.label_tokens)
            trainer.model.class_emb = emb
            acc = (trainer.model(trainer.x).argmax(1) == trainer.y).float().mean().item()
        print(f"epoch {trainer.epoch} train-acc {acc:.4f}")


class Trainer:
    def __init__(self, model, opt, label_tokens, callbacks):
        self.model, self.opt, self.label_tokens = model, opt, label_tokens
        self.callbacks = callbacks
        self.step = 0
        self.epoch = 0

    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def train_step(self, xb, yb):
        logits = self.model(xb)
        loss = F.cross_entropy(logits, yb)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss

    def fit(self, x, y, epochs, batch):
        self.x, self.y = x, y
        self._call("on_fit_start")
        for self.epoch in range(epochs):
            self._call("on_epoch_start")
            perm = torch.randperm(x.shape[0])
            for i in range(0, x.shape[0], batch):
                idx = perm[i:i + batch]
                self._call("on_batch_start")
                loss = self.train_step(x[idx], y[idx])
                self.step += 1
                self._call("on_batch_end", loss)
            self._call("on_epoch_end")


def make_data(cfg):
    g = torch.Generator().manual_seed(11)
    k, d = cfg["n_classes"], cfg["in_dim"]
    means = 1.2 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (480,), generator=g)
    x = means[y] + torch.randn(480, d, generator=g)
    tokens = torch.randint(0, cfg["vocab"], (k, cfg["desc_len"]), generator=g)
    return x, y, tokens


def main():
    cfg = CONFIG
    torch.manual_seed(cfg["seed"])
    x, y, tokens = make_data(cfg)
    model = DualEncoder(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    trainer = Trainer(model, opt, tokens, [LabelCacheCallback(), PrintLogger(every=5)])
    trainer.fit(x, y, cfg["epochs"], cfg["batch"])
    with torch.no_grad():
        emb = model.encode_labels(tokens)
        sim = (emb @ emb.t()).fill_diagonal_(0).max().item()
    print(f"label-encoder proj norm {model.proj.weight.norm().item():.5f}")
    print(f"max off-diagonal label similarity {sim:.5f}")


if __name__ == "__main__":
    main()
