import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.dk = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, pad_mask):
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.h, self.dk).transpose(1, 2)
        k = k.view(B, T, self.h, self.dk).transpose(1, 2)
        v = v.view(B, T, self.h, self.dk).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        attn_weights = F.softmax(scores, dim=-1)
        # zero out attention to padding tokens
        attn_weights.masked_fill_(pad_mask[:, None, None, :], 0.0)
        ctx = (attn_weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.out(ctx)


class Block(nn.Module):
    def __init__(self, d_model=32, n_heads=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 64), nn.GELU(), nn.Linear(64, d_model))

    def forward(self, x, pad_mask):
        x = x + self.attn(self.ln1(x), pad_mask)
        return x + self.ff(self.ln2(x))


model = Block()
head = nn.Linear(32, 3)
opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-3)
x = torch.randn(16, 10, 32)
lengths = torch.randint(4, 11, (16,))
pad_mask = torch.arange(10)[None, :] >= lengths[:, None]
y = torch.randint(0, 3, (16,))

for step in range(20):
    h = model(x, pad_mask)
    logits = head(h.mean(dim=1))
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.6f}")
print("final", loss.item())
