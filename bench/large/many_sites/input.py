"""A 200-line multi-tower model with many small feature functions: over 100 places a
clone could go, and one in-place write (in tower 7's gate) that breaks backward."""

import torch
import torch.nn as nn
import torch.nn.functional as F

EPOCHS = 1500
BATCH_SIZE = 32
HIDDEN = 64
N_TOWERS = 12


def tower_0_features(x, w, b):
    """Features of tower 0: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_1_features(x, w, b):
    """Features of tower 1: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_2_features(x, w, b):
    """Features of tower 2: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_3_features(x, w, b):
    """Features of tower 3: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_4_features(x, w, b):
    """Features of tower 4: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_5_features(x, w, b):
    """Features of tower 5: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_6_features(x, w, b):
    """Features of tower 6: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_7_features(x, w, b):
    """Features of tower 7: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.sigmoid(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    g.mul_(0.5)
    out = z + g
    return F.gelu(out)


def tower_8_features(x, w, b):
    """Features of tower 8: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_9_features(x, w, b):
    """Features of tower 9: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_10_features(x, w, b):
    """Features of tower 10: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


def tower_11_features(x, w, b):
    """Features of tower 11: affine, gate, residual, normalisation."""
    h = x @ w + b
    g = torch.tanh(h)
    r = g * h + x
    m = r.mean(dim=-1, keepdim=True)
    s = r.std(dim=-1, keepdim=True) + 1e-5
    z = (r - m) / s
    z = z * 0.5 + 0.5 * torch.relu(z)
    out = z + g
    return F.gelu(out)


class Towers(nn.Module):
    def __init__(self, hidden, n):
        super().__init__()
        self.w = nn.ParameterList(
            [nn.Parameter(torch.randn(hidden, hidden) / hidden**0.5) for _ in range(n)]
        )
        self.b = nn.ParameterList([nn.Parameter(torch.zeros(hidden)) for _ in range(n)])
        self.head = nn.Linear(hidden * n, 1)

    def forward(self, x):
        feats = [
            tower_0_features(x, self.w[0], self.b[0]),
            tower_1_features(x, self.w[1], self.b[1]),
            tower_2_features(x, self.w[2], self.b[2]),
            tower_3_features(x, self.w[3], self.b[3]),
            tower_4_features(x, self.w[4], self.b[4]),
            tower_5_features(x, self.w[5], self.b[5]),
            tower_6_features(x, self.w[6], self.b[6]),
            tower_7_features(x, self.w[7], self.b[7]),
            tower_8_features(x, self.w[8], self.b[8]),
            tower_9_features(x, self.w[9], self.b[9]),
            tower_10_features(x, self.w[10], self.b[10]),
            tower_11_features(x, self.w[11], self.b[11]),
        ]
        joined = torch.cat(feats, dim=-1)
        return self.head(joined).squeeze(-1)


def batches(n_batches, hidden):
    g = torch.Generator().manual_seed(1)
    for _ in range(n_batches):
        x = torch.randn(BATCH_SIZE, hidden, generator=g)
        y = x[:, :4].sum(dim=-1)
        yield x, y


torch.manual_seed(0)
model = Towers(HIDDEN, N_TOWERS)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(EPOCHS):
    for x, y in batches(4, HIDDEN):
        pred = model(x)
        loss = F.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if epoch % 100 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")
