# Sequence tagger trained with constrained decoding targets: every sentence only allows a
# subset of the tag vocabulary (the constraint mask), plus an auxiliary z-loss on the raw
# logits (PaLM-style, keeps log Z near 0).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB = 50
N_TAGS = 24
ALLOWED = 8
EMB = 32
SEQ = 12
N_SENT = 256
BATCH = 32
EPOCHS = 4
LR = 3e-3
Z_COEF = 1e-3


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, EMB)
        self.conv = nn.Conv1d(EMB, 64, kernel_size=3, padding=1)
        self.proj = nn.Linear(64, N_TAGS)

    def forward(self, tokens):
        h = self.emb(tokens).transpose(1, 2)
        h = F.gelu(self.conv(h)).transpose(1, 2)
        return self.proj(h)


# synthetic data: the tag is a fixed function of the token and its left neighbour
tokens = torch.randint(0, VOCAB, (N_SENT, SEQ))
table = torch.randint(0, N_TAGS, (VOCAB, VOCAB))
left = torch.cat([torch.zeros(N_SENT, 1, dtype=torch.long), tokens[:, :-1]], dim=1)
tags = table[tokens, left]
# per-sentence constraint: the gold tags plus random distractors
constraint = torch.zeros(N_SENT, N_TAGS, dtype=torch.bool)
constraint[torch.arange(N_SENT)[:, None], tags] = True
extra = torch.rand(N_SENT, N_TAGS).argsort(dim=1)[:, :ALLOWED]
constraint[torch.arange(N_SENT)[:, None], extra] = True

model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=LR)

for epoch in range(EPOCHS):
    perm = torch.randperm(N_SENT)
    total_ce, total_z = 0.0, 0.0
    for i in range(0, N_SENT, BATCH):
        idx = perm[i:i + BATCH]
        logits = model(tokens[idx])
        z_loss = Z_COEF * torch.logsumexp(logits, dim=-1).pow(2).mean()
        constraint_masks = constraint[idx][:, None, :].expand_as(logits)
        logits.masked_fill_(~constraint_masks, -math.inf)
        ce = F.cross_entropy(logits.reshape(-1, N_TAGS), tags[idx].reshape(-1))
        loss = ce + z_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        total_ce += ce.item()
        total_z += z_loss.item()
    nb = N_SENT // BATCH
    print(f"epoch {epoch} ce {total_ce / nb:.6f} z {total_z / nb:.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
