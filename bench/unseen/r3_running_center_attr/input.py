# Regression net with a "center" layer that subtracts a running mean of its input,
# updated from itself at every forward (the DINO-style centre, written without the
# @torch.no_grad() that facebookresearch/dino puts on update_center). Based on
# https://github.com/Lightning-AI/lightning-thunder/issues/1950 (a buffer updated during
# forward -> "Trying to backward through the graph a second time") and
# https://github.com/exiawsh/StreamPETR/issues/63 (memory carried across iterations must
# be detached).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(17)


class RunningCenter(nn.Module):
    def __init__(self, dim, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running", torch.zeros(dim))

    def forward(self, x):
        out = x - self.running
        if self.training:
            self.running = self.running * self.momentum + x.mean(0) * (1 - self.momentum)
        return out


model = nn.Sequential(
    nn.Linear(6, 32), RunningCenter(32), nn.Tanh(),
    nn.Linear(32, 32), RunningCenter(32), nn.Tanh(),
    nn.Linear(32, 1),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X = torch.randn(256, 6) + 2.0
Y = (X[:, :1] * X[:, 1:2]).sin() + 0.1 * X[:, 2:3]

for step in range(15):
    idx = torch.randint(0, 256, (32,))
    loss = F.mse_loss(model(X[idx]), Y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f} center {model[1].running.norm().item():.6f}")

model.eval()
with torch.no_grad():
    print(f"eval loss {F.mse_loss(model(X), Y).item():.6f}")
