# Two-tower recommender with norm-constrained embeddings (nn.Embedding(max_norm=1.0)),
# trained with a full softmax over the item catalogue plus a pointwise alignment term.
# Based on https://github.com/pytorch/pytorch/issues/26596 ("nn.Embedding with max_norm
# shows unstable behavior and causes sometimes runtime error": using embedding.weight in a
# differentiable op before calling the embedding, which renormalises the weight in place;
# the documented cure is `embedding.weight.clone()`, see pytorch/pytorch#45595).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(19)

N_USERS, N_ITEMS, D = 40, 60, 16


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(N_USERS, D, max_norm=1.0)
        self.item = nn.Embedding(N_ITEMS, D, max_norm=1.0)
        self.scale = nn.Parameter(torch.tensor(5.0))

    def forward(self, users, items):
        u = self.user(users)
        full_logits = self.scale * (u @ self.item.weight.t())
        pos = self.item(items)
        align = (u * pos).sum(1)
        return full_logits, align


model = TwoTower()
opt = torch.optim.Adam(model.parameters(), lr=2e-2)
users = torch.randint(0, N_USERS, (500,))
items = (users * 3 + torch.randint(0, 4, (500,))) % N_ITEMS

for step in range(20):
    idx = torch.randint(0, 500, (64,))
    full_logits, align = model(users[idx], items[idx])
    loss = F.cross_entropy(full_logits, items[idx]) - 0.1 * align.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        print(f"step {step} loss {loss.item():.6f} max item norm {model.item.weight.norm(dim=1).max().item():.6f}")
