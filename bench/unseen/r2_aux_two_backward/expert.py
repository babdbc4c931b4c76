import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(8)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, 5)
        self.recon_head = nn.Linear(32, 20)

    def forward(self, x):
        z = self.encoder(x)
        return self.cls_head(z), self.recon_head(z)


model = MultiTask()
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
X = torch.randn(128, 20)
y = torch.randint(0, 5, (128,))

for epoch in range(25):
    logits, recon = model(X)
    main_loss = F.cross_entropy(logits, y)
    aux_loss = F.mse_loss(recon, X)
    opt.zero_grad()
    main_loss.backward(retain_graph=True)
    (0.3 * aux_loss).backward()
    opt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch} main {main_loss.item():.6f} aux {aux_loss.item():.6f}")
print(f"final main {main_loss.item():.6f}")
