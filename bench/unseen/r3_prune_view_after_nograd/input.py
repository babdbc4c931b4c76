# Iterative magnitude pruning during training: every few steps the smallest weights of
# the hidden layers are set to zero. Based on
# https://github.com/official-stockfish/nnue-pytorch/pull/75 ("Use torch.no_grad() when
# zeroing virtual feature weights") and the no_grad-view rule from
# https://github.com/pytorch/pytorch/pull/32839 ("move both the view and the inplace inside
# the no_grad block").
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(13)

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
X = torch.randn(300, 20)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0.5).long()


def prune_smallest(layer, frac):
    with torch.no_grad():
        flat = layer.weight.view(-1)
        k = int(frac * flat.numel())
        idx = flat.abs().argsort()[:k]
    flat[idx] = 0


def sparsity():
    zeros = sum((m.weight == 0).sum().item() for m in (model[0], model[2]))
    return zeros / (model[0].weight.numel() + model[2].weight.numel())


for step in range(16):
    idx = torch.randint(0, 300, (50,))
    loss = F.cross_entropy(model(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 3:
        frac = 0.2 * (step + 1) / 4
        prune_smallest(model[0], frac)
        prune_smallest(model[2], frac)
    print(f"step {step} loss {loss.item():.6f} sparsity {sparsity():.6f}")
