import torch
import torch.nn.functional as F

from .monitor import GradMonitor


class Trainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        t = cfg["train"]
        self.opt = torch.optim.AdamW(model.parameters(), lr=t["lr"], weight_decay=t["weight_decay"])
        self.monitor = GradMonitor()
        target = cfg["monitor"]["modules"]
        self.monitor.attach((f"block{i}.{target}", getattr(blk, target))
                            for i, blk in enumerate(model.blocks))

    def train_step(self, x, y):
        self.model.train()
        loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        logits = self.model(x)
        return F.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()

    def fit(self, train, val, gen):
        x, y = train
        t = self.cfg["train"]
        for epoch in range(t["epochs"]):
            perm = torch.randperm(x.size(0), generator=gen)
            losses = [self.train_step(x[idx], y[idx]) for idx in perm.split(t["batch_size"])]
            val_loss, val_acc = self.evaluate(*val)
            print(f"epoch {epoch} train_loss {sum(losses) / len(losses):.5f} val_loss {val_loss:.5f} val_acc {val_acc:.4f}")
            print("  grad@input " + " ".join(f"{k} {v:.5f}" for k, v in self.monitor.epoch_summary().items()))
