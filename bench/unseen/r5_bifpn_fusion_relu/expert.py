# 1-D feature pyramid with BiFPN-style "fast normalized fusion" (EfficientDet):
# each fused level is sum_i w_i * feat_i / (sum_j w_j + eps) with w = relu(w_raw).
# Task: per-position regression of a multi-scale synthetic signal.
# Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

B, L, C = 16, 64, 8
EPOCHS = 40


def make_batch(n):
    t = torch.linspace(0, 1, L)
    f = torch.rand(n, 3) * torch.tensor([2.0, 6.0, 20.0]) + torch.tensor([1.0, 4.0, 12.0])
    amp = torch.rand(n, 3)
    x = sum(amp[:, k:k + 1] * torch.sin(2 * torch.pi * f[:, k:k + 1] * t) for k in range(3))
    y = amp[:, 0:1] * torch.sin(2 * torch.pi * f[:, 0:1] * t) - 0.5 * amp[:, 2:3] * torch.sin(2 * torch.pi * f[:, 2:3] * t)
    return (x + 0.05 * torch.randn_like(x)).unsqueeze(1), y


class FastNormalizedFusion(nn.Module):
    def __init__(self, n_inputs, eps=1e-4):
        super().__init__()
        self.eps = eps
        self.w = nn.Parameter(torch.ones(n_inputs))
        self.w_relu = nn.ReLU()

    def forward(self, feats):
        w = self.w_relu(self.w)
        w = w / (w.sum() + self.eps)
        return sum(w[i] * f for i, f in enumerate(feats))


class TinyBiFPN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv1d(1, C, 5, padding=2)
        self.down1 = nn.Conv1d(C, C, 3, stride=2, padding=1)
        self.down2 = nn.Conv1d(C, C, 3, stride=2, padding=1)
        self.fuse_mid = FastNormalizedFusion(2)
        self.fuse_top = FastNormalizedFusion(3)
        self.conv_mid = nn.Conv1d(C, C, 3, padding=1)
        self.out = nn.Conv1d(C, 1, 3, padding=1)

    def forward(self, x):
        p1 = F.silu(self.stem(x))            # L
        p2 = F.silu(self.down1(p1))          # L/2
        p3 = F.silu(self.down2(p2))          # L/4
        up3 = F.interpolate(p3, size=p2.shape[-1])
        m2 = F.silu(self.conv_mid(self.fuse_mid([p2, up3])))
        up2 = F.interpolate(m2, size=p1.shape[-1])
        up3b = F.interpolate(p3, size=p1.shape[-1])
        o1 = self.fuse_top([p1, up2, up3b])
        return self.out(o1).squeeze(1)


model = TinyBiFPN()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x_val, y_val = make_batch(64)

for epoch in range(EPOCHS):
    x, y = make_batch(B)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 8 == 0 or epoch == EPOCHS - 1:
        with torch.no_grad():
            val = F.mse_loss(model(x_val), y_val).item()
        print(f"epoch {epoch:2d} loss {loss.item():.6f} val {val:.6f}")

print("fusion weights mid", " ".join(f"{v:.6f}" for v in model.fuse_mid.w.tolist()))
print("fusion weights top", " ".join(f"{v:.6f}" for v in model.fuse_top.w.tolist()))
checksum = sum(p.double().sum() for p in model.parameters()).item()
print(f"checksum {checksum:.6f}")
