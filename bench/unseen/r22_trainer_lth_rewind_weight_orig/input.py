"""Lottery-ticket style iterative magnitude pruning with weight rewinding (torch.nn.utils.prune)."""
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune

CONFIG = json.loads("""{"seed": 0, "rounds": 3, "steps_per_round": 8, "batch": 32,
                        "lr": 0.05, "prune_amount": 0.3, "rewind_to": "init"}""")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 32)
        self.fc2 = nn.Linear(32, 32)
        self.out = nn.Linear(32, 3)

    def forward(self, x):
        return self.out(F.relu(self.fc2(F.relu(self.fc1(x)))))


class LotteryTrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.prunable = [("fc1", model.fc1), ("fc2", model.fc2), ("out", model.out)]
        # theta_0: the weights the winning ticket is rewound to
        self.init_state = {name: m.weight.detach().clone() for name, m in self.prunable}
        self.optimizer = self.make_optimizer()
        self.step = 0

    def make_optimizer(self):
        return torch.optim.SGD(self.model.parameters(), lr=self.cfg["lr"], momentum=0.9)

    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.step += 1
        return loss.item()

    def prune_round(self):
        for name, m in self.prunable:
            prune.l1_unstructured(m, name="weight", amount=self.cfg["prune_amount"])

    def rewind(self):
        for name, m in self.prunable:
            m.weight_orig.copy_(self.init_state[name])
        self.optimizer = self.make_optimizer()

    def sparsity(self):
        zeros = sum((m.weight == 0).sum().item() for _, m in self.prunable)
        total = sum(m.weight.numel() for _, m in self.prunable)
        return zeros / total

    def fit(self, x, y, gen):
        for r in range(self.cfg["rounds"]):
            for _ in range(self.cfg["steps_per_round"]):
                idx = torch.randint(0, len(x), (self.cfg["batch"],), generator=gen)
                loss = self.train_step(x[idx], y[idx])
            with torch.no_grad():
                acc = (self.model(x).argmax(1) == y).float().mean().item()
            print(f"round {r} loss {loss:.6f} acc {acc:.6f} sparsity {self.sparsity():.6f}")
            if r < self.cfg["rounds"] - 1:
                self.prune_round()
                self.rewind()


def main():
    torch.manual_seed(CONFIG["seed"])
    gen = torch.Generator().manual_seed(CONFIG["seed"])
    W = torch.randn(12, 3, generator=gen)
    x = torch.randn(256, 12, generator=gen)
    y = (x @ W + 0.3 * torch.randn(256, 3, generator=gen)).argmax(1)
    trainer = LotteryTrainer(Net(), CONFIG)
    trainer.fit(x, y, gen)
    eff = sum(m.weight.sum() for _, m in trainer.prunable).item()
    total = sum(p.sum() for p in trainer.model.parameters()).item()
    print(f"checksum effective_weights {eff:.6f} params {total:.6f}")


if __name__ == "__main__":
    main()
