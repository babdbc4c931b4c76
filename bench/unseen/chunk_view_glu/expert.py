import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(12)


class GLUBlock(nn.Module):
    """Gated linear unit: split the projection into value and gate halves."""

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        value, gate = self.proj(x).chunk(2, dim=-1)
        value = value * torch.sigmoid(gate)
        return self.norm(x + value)


model = nn.Sequential(nn.Linear(10, 24), GLUBlock(24), GLUBlock(24), nn.Linear(24, 1))
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
X = torch.randn(256, 10)
y = (X[:, :3].prod(dim=1, keepdim=True) > 0).float()

for epoch in range(15):
    loss = F.binary_cross_entropy_with_logits(model(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch:2d} loss {loss.item():.6f}")
