# Quantization-aware training of an MLP with k-bit sigmoid activations; the rounding uses
# a straight-through-estimator autograd.Function (DoReFa-style activation quantizer).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN_DIM = 16
HIDDEN = 48
N_CLASSES = 4
ACT_BITS = 2
N_TRAIN = 256
BATCH = 32
EPOCHS = 5
LR = 5e-3


class RoundSTE(torch.autograd.Function):
    """k-bit uniform quantization of values in [0, 1]; identity gradient."""

    @staticmethod
    def forward(ctx, x, bits):
        n = float(2 ** bits - 1)
        return torch.round(x * n) / n

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class QuantSigmoid(nn.Module):
    def __init__(self, bits):
        super().__init__()
        self.bits = bits

    def forward(self, x):
        return RoundSTE.apply(torch.sigmoid(x), self.bits)


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN_DIM, HIDDEN)
        self.act1 = QuantSigmoid(ACT_BITS)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.act2 = QuantSigmoid(ACT_BITS)
        self.fc3 = nn.Linear(HIDDEN, N_CLASSES)

    def forward(self, x):
        x = self.act1(self.fc1(x))
        x = self.act2(self.fc2(x))
        return self.fc3(x)


X = torch.randn(N_TRAIN, IN_DIM)
W_true = torch.randn(IN_DIM, N_CLASSES)
y = (X @ W_true).argmax(dim=1)

model = QNet()
opt = torch.optim.Adam(model.parameters(), lr=LR)

for epoch in range(EPOCHS):
    perm = torch.randperm(N_TRAIN)
    running = 0.0
    for i in range(0, N_TRAIN, BATCH):
        idx = perm[i:i + BATCH]
        out = model(X[idx])
        loss = F.cross_entropy(out, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss.item()
    acc = (model(X).argmax(1) == y).float().mean().item()
    print(f"epoch {epoch} loss {running / (N_TRAIN // BATCH):.6f} acc {acc:.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
