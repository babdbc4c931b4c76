# RealNVP / Glow-style affine coupling flow fitted by maximum likelihood to a 4-D mixture of
# Gaussians. The conditioner network lives in models.py.
import math

import torch
import torch.nn as nn

from models import ConditionerNet

torch.manual_seed(0)

DIM = 4
N_LAYERS = 4
HIDDEN = 64
N_SAMPLES = 1024
BATCH = 128
EPOCHS = 6
LR = 2e-3


class AffineCoupling(nn.Module):
    def __init__(self, dim, flip):
        super().__init__()
        self.flip = flip
        self.d = dim // 2
        self.net = ConditionerNet(self.d, 2 * (dim - self.d), HIDDEN)
        self.scale = nn.Parameter(torch.ones(1, dim - self.d))

    def forward(self, x):
        if self.flip:
            x = x.flip(1)
        xa, xb = x[:, :self.d], x[:, self.d:]
        s, t = self.net(xa).chunk(2, dim=1)
        s = torch.tanh(s)
        s = s * self.scale  # learnable range for the log-scale, as in Glow
        yb = xb * torch.exp(s) + t
        y = torch.cat([xa, yb], dim=1)
        if self.flip:
            y = y.flip(1)
        return y, s.sum(dim=1)


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([AffineCoupling(DIM, flip=i % 2 == 1) for i in range(N_LAYERS)])

    def log_prob(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        log_pz = -0.5 * (x ** 2).sum(dim=1) - 0.5 * DIM * math.log(2 * math.pi)
        return log_pz + log_det


# data: mixture of three anisotropic Gaussians
centers = torch.randn(3, DIM) * 2.0
scales = torch.rand(3, DIM) * 0.5 + 0.2
comp = torch.randint(0, 3, (N_SAMPLES,))
data = centers[comp] + scales[comp] * torch.randn(N_SAMPLES, DIM)

flow = Flow()
opt = torch.optim.Adam(flow.parameters(), lr=LR)

for epoch in range(EPOCHS):
    perm = torch.randperm(N_SAMPLES)
    total = 0.0
    for i in range(0, N_SAMPLES, BATCH):
        xb = data[perm[i:i + BATCH]]
        loss = -flow.log_prob(xb).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * xb.shape[0]
    print(f"epoch {epoch} nll {total / N_SAMPLES:.6f}")

print(f"{sum(p.double().sum().item() for p in flow.parameters()):.6f}")
