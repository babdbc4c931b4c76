import torch
import torch.nn as nn

torch.manual_seed(8)

X = torch.randn(512, 8)
y = X @ torch.randn(8, 1) + 0.1 * torch.randn(512, 1)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
criterion = nn.MSELoss()

for epoch in range(5):
    total_loss = 0
    for i in range(0, 512, 64):
        xb, yb = X[i:i + 64], y[i:i + 64]
        loss = criterion(model(xb), yb)
        total_loss += loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} avg loss {total_loss / 8:.6f}")
