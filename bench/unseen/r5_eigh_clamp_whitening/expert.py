# Classifier with a differentiable ZCA-whitening layer on batch features
# (decorrelated batch norm, Huang et al. 2018). Eigenvalues are floored at EPS
# before the inverse square root. Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N, D_IN, D_FEAT, N_CLASSES = 256, 10, 6, 4
EPS = 0.05
BATCH = 64
EPOCHS = 5

# anisotropic inputs: some directions carry almost no variance
scales = torch.tensor([3.0, 2.0, 1.5, 1.0, 0.5, 0.3, 0.1, 0.05, 0.02, 0.01])
X = torch.randn(N, D_IN) * scales
W_true = torch.randn(D_IN, N_CLASSES)
y = (X @ W_true + 0.3 * torch.randn(N, N_CLASSES)).argmax(1)


class ZCAWhitening(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        xc = x - x.mean(0, keepdim=True)
        cov = xc.t() @ xc / (x.size(0) - 1)
        evals, evecs = torch.linalg.eigh(cov)
        evals = evals.clamp_min(self.eps)
        whiten = evecs @ torch.diag(evals.rsqrt()) @ evecs.t()
        return xc @ whiten


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Linear(D_IN, D_FEAT)
        self.white = ZCAWhitening(EPS)
        self.cls = nn.Linear(D_FEAT, N_CLASSES)

    def forward(self, x):
        return self.cls(torch.tanh(self.white(self.feat(x))))


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(EPOCHS):
    perm = torch.randperm(N)
    tot, correct = 0.0, 0
    for b in range(0, N, BATCH):
        idx = perm[b:b + BATCH]
        logits = model(X[idx])
        loss = F.cross_entropy(logits, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot += loss.item() * len(idx)
        correct += (logits.argmax(1) == y[idx]).sum().item()
    print(f"epoch {epoch} loss {tot / N:.6f} acc {correct / N:.4f}")

with torch.no_grad():
    f = model.feat(X)
    fc = f - f.mean(0)
    ev = torch.linalg.eigvalsh(fc.t() @ fc / (N - 1))
print("feature eigenvalues", " ".join(f"{v:.6f}" for v in ev.tolist()))
checksum = sum(p.double().sum() for p in model.parameters()).item()
print(f"checksum {checksum:.6f}")
