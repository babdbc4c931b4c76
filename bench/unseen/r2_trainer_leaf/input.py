import torch

torch.manual_seed(5)


class LogisticRegressionTrainer:
    """Hand-written logistic regression trainer (no torch.optim)."""

    def __init__(self, n_features, lr=0.5, l2=1e-3):
        self.w = torch.zeros(n_features, 1, requires_grad=True)
        self.b = torch.zeros(1, requires_grad=True)
        self.lr = lr
        self.l2 = l2

    def forward(self, X):
        return torch.sigmoid(X @ self.w + self.b)

    def loss(self, X, y):
        p = self.forward(X).clamp(1e-7, 1 - 1e-7)
        bce = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
        return bce + self.l2 * (self.w ** 2).sum()

    def step(self, X, y):
        loss = self.loss(X, y)
        loss.backward()
        self.w -= self.lr * self.w.grad
        self.b -= self.lr * self.b.grad
        self.w.grad.zero_()
        self.b.grad.zero_()
        return loss.item()

    def fit(self, X, y, epochs):
        for epoch in range(epochs):
            l = self.step(X, y)
            if epoch % 10 == 0:
                print(f"epoch {epoch} loss {l:.6f}")
        return l


X = torch.randn(300, 4)
true_w = torch.tensor([[1.5], [-2.0], [0.5], [0.0]])
y = (torch.sigmoid(X @ true_w) > torch.rand(300, 1)).float()
trainer = LogisticRegressionTrainer(4)
final = trainer.fit(X, y, 50)
print(f"final loss {final:.6f}")
print("w", [round(v, 4) for v in trainer.w.detach().flatten().tolist()])
