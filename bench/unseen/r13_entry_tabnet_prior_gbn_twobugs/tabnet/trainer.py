import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer, lambda_sparse=1e-3, clip=2.0):
        self.model = model
        self.optimizer = optimizer
        self.lambda_sparse = lambda_sparse
        self.clip = clip
        self.history = []

    def train_step(self, x, y):
        self.model.train()
        logits, M_loss = self.model(x)
        loss = F.cross_entropy(logits, y) - self.lambda_sparse * M_loss
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        logits, _ = self.model(x)
        return (logits.argmax(1) == y).float().mean().item()

    def fit(self, x_train, y_train, x_valid, y_valid, epochs, batch_size, generator):
        for epoch in range(1, epochs + 1):
            perm = torch.randperm(x_train.shape[0], generator=generator)
            losses = []
            for i in range(0, x_train.shape[0], batch_size):
                idx = perm[i:i + batch_size]
                losses.append(self.train_step(x_train[idx], y_train[idx]))
            acc = self.evaluate(x_valid, y_valid)
            self.history.append((sum(losses) / len(losses), acc))
            print(f"epoch {epoch}  loss {self.history[-1][0]:.4f}  valid acc {acc:.4f}")
        return self.history
