# Small causal transformer with rotary position embeddings whose frequencies are learned
# (the `learned_freq=True` option of lucidrains/rotary-embedding-torch), trained on a
# synthetic "predict the token seen OFFSET steps ago" task.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB = 16
D_MODEL = 32
N_HEADS = 4
SEQ_LEN = 24
OFFSET = 3
BATCH = 32
STEPS = 25
LR = 3e-3


def apply_rotary(x, cos, sin):
    """Rotate the (even, odd) feature pairs of x by the given angles, in place."""
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    r1 = x1 * cos - x2 * sin
    r2 = x1 * sin + x2 * cos
    x[..., 0::2] = r1
    x[..., 1::2] = r2
    return x


class LearnedRotary(nn.Module):
    def __init__(self, dim, theta=10000.0):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))
        self.freqs = nn.Parameter(inv_freq)

    def forward(self, q, k):
        pos = torch.arange(q.shape[-2], dtype=torch.float32)
        angles = pos[:, None] * self.freqs[None, :]
        cos, sin = angles.cos(), angles.sin()
        return apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = D_MODEL // N_HEADS
        self.q = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.k = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.v = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.out = nn.Linear(D_MODEL, D_MODEL)
        self.rotary = LearnedRotary(self.head_dim)
        self.register_buffer("causal", torch.tril(torch.ones(SEQ_LEN, SEQ_LEN, dtype=torch.bool)))

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, N_HEADS, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, t, N_HEADS, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, t, N_HEADS, self.head_dim).transpose(1, 2)
        q, k = self.rotary(q, k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~self.causal[:t, :t], float("-inf"))
        att = scores.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, D_MODEL)
        return self.out(y)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D_MODEL)
        self.ln1 = nn.LayerNorm(D_MODEL)
        self.attn = CausalSelfAttention()
        self.ln2 = nn.LayerNorm(D_MODEL)
        self.mlp = nn.Sequential(nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(), nn.Linear(4 * D_MODEL, D_MODEL))
        self.head = nn.Linear(D_MODEL, VOCAB)

    def forward(self, idx):
        x = self.emb(idx)
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return self.head(x)


def make_batch():
    seq = torch.randint(0, VOCAB, (BATCH, SEQ_LEN))
    target = torch.full_like(seq, -100)
    target[:, OFFSET:] = seq[:, :-OFFSET]
    return seq, target


model = TinyLM()
opt = torch.optim.Adam(model.parameters(), lr=LR)

for step in range(STEPS):
    seq, target = make_batch()
    logits = model(seq)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1), ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")

print(f"freqs {model.attn.rotary.freqs.detach().sum().item():.6f}")
print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
