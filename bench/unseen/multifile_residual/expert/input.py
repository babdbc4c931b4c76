import torch
import torch.nn.functional as F

from models import ResNetRegressor

torch.manual_seed(3)

X = torch.randn(200, 6)
y = torch.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3]

model = ResNetRegressor(6)
opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=1e-4)

for epoch in range(15):
    pred = model(X)
    loss = F.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch:2d} mse {loss.item():.6f}")
