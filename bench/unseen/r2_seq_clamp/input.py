import torch
import torch.nn as nn

torch.manual_seed(3)


class Clip(nn.Module):
    """Clamp activations into a range (used as a 'hard' saturation)."""

    def __init__(self, lo, hi):
        super().__init__()
        self.lo, self.hi = lo, hi

    def forward(self, x):
        return x.clamp_(self.lo, self.hi)


def make_model():
    return nn.Sequential(
        nn.Linear(6, 24),
        nn.Sigmoid(),
        Clip(0.05, 0.95),
        nn.Linear(24, 24),
        nn.ReLU(),
        nn.Linear(24, 2),
    )


torch.manual_seed(3)
X = torch.randn(200, 6)
y = (X[:, 0] * X[:, 1] > 0).long()

model = make_model()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
crit = nn.CrossEntropyLoss()
for epoch in range(40):
    logits = model(X)
    loss = crit(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 8 == 0:
        print(f"epoch {epoch:3d} loss {loss.item():.6f}")
with torch.no_grad():
    acc = (model(X).argmax(1) == y).float().mean()
print(f"train acc {acc.item():.4f}")
