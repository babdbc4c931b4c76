# Multi-label signal classifier trained with a hand-written focal loss.
# Two bugs from two real reports: the residual block in models.py adds the skip
# connection in place after a ReLU (https://github.com/iMED-Lab/ER-Net/pull/3,
# "replace out+=residual with out=out+residual"), and the focal loss clamps the
# sigmoid output in place (the clamp of CenterNet's _sigmoid,
# https://github.com/xingyizhou/CenterNet/issues/201, done with clamp_).
import torch

from models import SignalNet

torch.manual_seed(5)


def focal_loss(logits, target, gamma=2.0, alpha=0.25, eps=1e-4):
    p = torch.sigmoid(logits)
    p.clamp_(eps, 1.0 - eps)
    pos = -alpha * (1 - p) ** gamma * torch.log(p) * target
    neg = -(1 - alpha) * p ** gamma * torch.log(1 - p) * (1 - target)
    return (pos + neg).sum() / target.sum().clamp(min=1.0)


X = torch.randn(96, 2, 64)
Y = (torch.rand(96, 5) < 0.3).float()
model = SignalNet()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(4):
    perm = torch.randperm(96)
    for i in range(0, 96, 32):
        idx = perm[i:i + 32]
        loss = focal_loss(model(X[idx]), Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"epoch {epoch} batch {i // 32} loss {loss.item():.6f}")
