import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.heads, C // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        q = q * (1.0 / math.sqrt(C // self.heads))
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.out(y)


model = nn.Sequential(nn.Linear(4, 16), SelfAttention(16), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(16, 5, 4)
y = x.sum(dim=(1, 2), keepdim=False)[:, None, None].expand(16, 5, 1)

for step in range(20):
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
