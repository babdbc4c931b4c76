import torch
import torch.nn as nn

torch.manual_seed(12)

# ordinal "rating" predictor: predict a class 0..4, train on distance to the true rating
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 5))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X = torch.randn(200, 8)
ratings = torch.clamp((X[:, 0] * 1.5 + 2).round(), 0, 4)

for epoch in range(20):
    logits = model(X)
    # differentiable surrogate: expected rating under the softmax
    predicted_rating = (torch.softmax(logits, dim=1) * torch.arange(5.0)).sum(dim=1)
    loss = ((predicted_rating - ratings) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch} mse {loss.item():.6f}")
print("final", loss.item())
