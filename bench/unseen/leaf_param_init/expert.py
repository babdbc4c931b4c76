import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(6)


class LowRankLinear(nn.Module):
    def __init__(self, d_in, d_out, rank=4):
        super().__init__()
        self.U = nn.Parameter(torch.empty(d_out, rank))
        self.V = nn.Parameter(torch.empty(rank, d_in))
        self.bias = nn.Parameter(torch.zeros(d_out))
        nn.init.normal_(self.U, 0, 0.1)
        nn.init.normal_(self.V, 0, 0.1)

    def forward(self, x):
        return x @ (self.U @ self.V).t() + self.bias


model = nn.Sequential(LowRankLinear(12, 24), nn.ReLU(), LowRankLinear(24, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
X = torch.randn(300, 12)
y = (X[:, :6].sum(1) > X[:, 6:].sum(1)).long()

for epoch in range(20):
    loss = F.cross_entropy(model(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 4 == 0:
        print(f"epoch {epoch} loss {loss.item():.6f}")
print("final", round(loss.item(), 6))
