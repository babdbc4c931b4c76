import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, tracker, cfg):
        self.model = model
        self.tracker = tracker
        self.sparsity_weight = cfg["hooks"]["sparsity_weight"]
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg["optim"]["lr"])
        self.global_step = 0

    def train_step(self, x, y):
        self.model.train()
        self.tracker.reset()
        logits = self.model(x)
        task = F.cross_entropy(logits, y)
        penalty = self.tracker.penalty()
        loss = task + self.sparsity_weight * penalty
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.global_step += 1
        return task.item(), float(penalty)

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        tot, correct, loss = 0, 0, 0.0
        for x, y in loader:
            logits = self.model(x)
            loss += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(1) == y).sum().item()
            tot += len(y)
        return loss / tot, correct / tot

    def fit(self, train_loader, val_loader, epochs):
        for epoch in range(epochs):
            self.tracker.reset()
            task_sum, pen_sum, n = 0.0, 0.0, 0
            for x, y in train_loader:
                task, pen = self.train_step(x, y)
                task_sum, pen_sum, n = task_sum + task, pen_sum + pen, n + 1
            val_loss, val_acc = self.evaluate(val_loader)
            print(f"epoch {epoch} task {task_sum / n:.5f} act_l1 {pen_sum / n:.5f} "
                  f"val_loss {val_loss:.5f} val_acc {val_acc:.4f}")
