# Early-exit classifier with deep supervision: three exits share one trunk, each exit's
# loss is backpropagated on its own so that the script can log how much each exit adds
# to the trunk's gradient. Based on
# https://github.com/facebookresearch/pytorch_GAN_zoo/issues/83 (two losses over one
# forward, backpropagated one after the other -> "Trying to backward through the graph a
# second time"; "doing the backward in different places doesn't change the loss") and
# https://github.com/naver-ai/StyleMapGAN/issues/16 .
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(6)


class EarlyExitNet(nn.Module):
    def __init__(self, d_in=16, width=32, n_cls=5):
        super().__init__()
        self.stages = nn.ModuleList([
            nn.Sequential(nn.Linear(d_in, width), nn.ReLU()),
            nn.Sequential(nn.Linear(width, width), nn.ReLU()),
            nn.Sequential(nn.Linear(width, width), nn.ReLU()),
        ])
        self.exits = nn.ModuleList([nn.Linear(width, n_cls) for _ in range(3)])

    def forward(self, x):
        outs = []
        for stage, head in zip(self.stages, self.exits):
            x = stage(x)
            outs.append(head(x))
        return outs


model = EarlyExitNet()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
X = torch.randn(200, 16)
y = (X[:, :5] + 0.5 * X[:, 5:10]).argmax(1)
exit_weights = [0.3, 0.3, 1.0]

for step in range(10):
    idx = torch.randint(0, 200, (40,))
    opt.zero_grad()
    outs = model(X[idx])
    norms = []
    for w, out in zip(exit_weights, outs):
        loss = w * F.cross_entropy(out, y[idx])
        loss.backward()
        norms.append(model.stages[0][0].weight.grad.norm().item())
    opt.step()
    print(f"step {step} final-exit loss {loss.item():.6f} "
          f"trunk grad {norms[0]:.6f} {norms[1]:.6f} {norms[2]:.6f}")
