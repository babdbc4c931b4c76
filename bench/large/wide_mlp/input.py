"""A wide MLP (2048 units) trained for 1000 epochs; label smoothing switches on after a
warm-up epoch and crashes there. At full size the first epoch alone takes seconds."""

import torch
import torch.nn as nn

EPOCHS = 1000
N_SAMPLES = 16384
BATCH_SIZE = 256
HIDDEN = 2048
N_CLASSES = 10
WARMUP = 1
SMOOTH = 0.1

torch.manual_seed(0)
X = torch.randn(N_SAMPLES, 64)
y = torch.randint(0, N_CLASSES, (N_SAMPLES,))
model = nn.Sequential(
    nn.Linear(64, HIDDEN),
    nn.ReLU(),
    nn.Linear(HIDDEN, HIDDEN),
    nn.ReLU(),
    nn.Linear(HIDDEN, N_CLASSES),
)
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(EPOCHS):
    for i in range(0, N_SAMPLES, BATCH_SIZE):
        xb, yb = X[i : i + BATCH_SIZE], y[i : i + BATCH_SIZE]
        probs = torch.softmax(model(xb), dim=1)
        if epoch >= WARMUP:
            probs.mul_(1 - SMOOTH).add_(SMOOTH / N_CLASSES)
        loss = -probs.gather(1, yb[:, None]).log().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
