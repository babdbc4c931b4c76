import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(9)

# multi-task: classification + reconstruction from a shared encoder
encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
cls_head = nn.Linear(8, 4)
dec_head = nn.Linear(8, 16)
params = list(encoder.parameters()) + list(cls_head.parameters()) + list(dec_head.parameters())
opt = torch.optim.Adam(params, lr=1e-2)

X = torch.randn(200, 16)
labels = X[:, :4].argmax(dim=1)

for step in range(20):
    z = encoder(X)
    cls_loss = F.cross_entropy(cls_head(z), labels)
    rec_loss = F.mse_loss(dec_head(z), X)
    opt.zero_grad()
    cls_loss.backward(retain_graph=True)
    rec_loss.backward()
    opt.step()
    print(f"step {step:2d} cls {cls_loss.item():.6f} rec {rec_loss.item():.6f}")
