# Semi-supervised self-training (FixMatch-style): soft pseudo-labels from a weakly
# augmented view are the target for several inner steps on the strongly augmented view.
# Based on the "target must be detached" answers for consistency / pseudo-label losses,
# e.g. https://github.com/XPixelGroup/BasicSR/issues/50 (targets from a network output are
# detached) and https://github.com/pytorch/examples/issues/116 (missing detach ->
# "Trying to backward through the graph a second time").
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(8)

D_IN, C, T = 10, 4, 0.5
model = nn.Sequential(nn.Linear(D_IN, 32), nn.ReLU(), nn.Linear(32, C))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

centers = torch.randn(C, D_IN) * 2
y_lab = torch.randint(0, C, (40,))
x_lab = centers[y_lab] + torch.randn(40, D_IN)
x_unl = centers[torch.randint(0, C, (400,))] + torch.randn(400, D_IN)


def soft_ce(logits, target):
    return -(target * F.log_softmax(logits, dim=1)).sum(1).mean()


for batch in range(6):
    xu = x_unl[torch.randint(0, 400, (64,))]
    x_weak = xu + 0.05 * torch.randn_like(xu)
    x_strong = xu + 0.5 * torch.randn_like(xu)
    target = F.softmax(model(x_weak) / T, dim=1)
    for inner in range(3):
        sup = F.cross_entropy(model(x_lab), y_lab)
        unsup = soft_ce(model(x_strong), target)
        loss = sup + unsup
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"batch {batch} inner {inner} sup {sup.item():.6f} unsup {unsup.item():.6f}")
