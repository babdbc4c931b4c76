import torch
import torch.nn as nn

torch.manual_seed(1)


class GatedMLP(nn.Module):
    """Gated MLP where small gates are hard-zeroed (sparsity trick)."""

    def __init__(self, d_in, d_hidden):
        super().__init__()
        self.value = nn.Linear(d_in, d_hidden)
        self.gate = nn.Linear(d_in, d_hidden)
        self.proj = nn.Linear(d_hidden, 1)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        mask = g < 0.2
        g = g.masked_fill(mask, 0)
        return self.proj(g * torch.relu(self.value(x)))


X = torch.randn(256, 8)
w_true = torch.randn(8, 1)
Y = X @ w_true + 0.1 * torch.randn(256, 1)

model = GatedMLP(8, 32)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.MSELoss()

for epoch in range(30):
    perm = torch.randperm(256)
    total = 0.0
    for i in range(0, 256, 64):
        idx = perm[i:i + 64]
        pred = model(X[idx])
        loss = loss_fn(pred, Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    if epoch % 5 == 0:
        print(f"epoch {epoch} loss {total / 4:.6f}")
print("done", total / 4)
