import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)


class Embedder(nn.Module):
    """Projects inputs onto the unit sphere (cosine-similarity embeddings)."""

    def __init__(self, d_in, d_emb):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(d_in, 64), nn.GELU(), nn.Linear(64, d_emb))

    def forward(self, x):
        z = self.proj(x)
        z /= z.norm(dim=-1, keepdim=True)
        return z


def contrastive_loss(a, b, temperature=0.1):
    logits = a @ b.t() / temperature
    labels = torch.arange(a.shape[0])
    return F.cross_entropy(logits, labels)


model = Embedder(20, 8)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
data = torch.randn(128, 20)

for step in range(25):
    x = data[torch.randint(0, 128, (32,))]
    view1 = x + 0.1 * torch.randn_like(x)
    view2 = x + 0.1 * torch.randn_like(x)
    loss = contrastive_loss(model(view1), model(view2))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step:2d} loss {loss.item():.6f}")
