import torch
import torch.nn as nn

torch.manual_seed(1)

# toy "pointer" model: score every item, never point at the padding slot 0
n_items, dim = 12, 16
enc = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(enc.parameters(), lr=0.1)

items = torch.randn(64, n_items, dim)
target = items[:, 1:, 0].argmax(dim=1) + 1

for step in range(30):
    scores = enc(items).squeeze(-1)          # (B, n_items)
    probs = torch.softmax(scores, dim=1).clone()
    probs[:, 0] = 0.0                        # mask padding slot
    probs = probs / probs.sum(dim=1, keepdim=True)
    loss = -torch.log(probs.gather(1, target[:, None]) + 1e-9).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.6f}")
print("final", loss.item())
