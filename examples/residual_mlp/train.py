"""Residual MLP regressor on a synthetic task. Crashes in backward: try `autoclone train.py`."""
import torch
import torch.nn as nn

EPOCHS = 15
BATCH = 128
IN_DIM = 8
HIDDEN = 32
BLOCKS = 3
LR = 3e-3


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.act = nn.GELU()

    def forward(self, x):
        h = self.fc2(self.act(self.fc1(x)))
        x += h  # in-place residual add "to save memory"
        return x


class ResidualMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(IN_DIM, HIDDEN)
        self.blocks = nn.Sequential(*[ResidualBlock(HIDDEN) for _ in range(BLOCKS)])
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x))).squeeze(1)


def main():
    torch.manual_seed(0)
    x = torch.randn(BATCH, IN_DIM)
    y = torch.sin(x[:, 0] * 2) + x[:, 1] * x[:, 2]
    model = ResidualMLP()
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    for step in range(EPOCHS):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.6f}")
    print(f"done final loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
