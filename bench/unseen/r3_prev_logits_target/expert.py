# Semi-supervised node/point classification with a temporal-consistency term: the
# predictions of the previous epoch are the target for this epoch (Laine & Aila,
# "Temporal Ensembling for Semi-Supervised Learning", https://arxiv.org/abs/1610.02242,
# reduced to a one-epoch memory). Based on the many "Trying to backward through the graph a
# second time" reports where an output is kept for the next iteration, e.g.
# https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57 .
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)

N, D_IN, C = 300, 12, 3
centers = torch.randn(C, D_IN) * 1.5
y = torch.randint(0, C, (N,))
X = centers[y] + torch.randn(N, D_IN)
labeled = torch.zeros(N, dtype=torch.bool)
labeled[:30] = True

model = nn.Sequential(nn.Linear(D_IN, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, C))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
w_cons = 0.5
prev_logits = None

for epoch in range(14):
    model.train()
    logits = model(X + 0.1 * torch.randn_like(X))
    loss = F.cross_entropy(logits[labeled], y[labeled])
    if prev_logits is not None:
        cons = F.mse_loss(F.softmax(logits, 1), F.softmax(prev_logits, 1))
        loss = loss + w_cons * cons
    prev_logits = logits.detach()
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (logits.argmax(1) == y).float().mean()
    print(f"epoch {epoch} loss {loss.item():.6f} acc {acc.item():.6f}")
