# Fine-tuning a tiny CLIP-style dual encoder (image features <-> token captions)
# with the symmetric InfoNCE loss and CLIP's learnable temperature (initialised to
# 1/0.07; capped, here at a logit scale of 16 as in our small-batch config).
# Run: python input.py
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB = 50
PAD = 0
SEQ = 8
IMG_DIM = 32
EMB = 16
N_PAIRS = 96
BATCH = 32
EPOCHS = 24
MAX_LOGIT_SCALE = math.log(16.0)

# synthetic paired data: caption tokens determine the image feature
captions = torch.randint(1, VOCAB, (N_PAIRS, SEQ))
lengths = torch.randint(3, SEQ + 1, (N_PAIRS,))
for i, L in enumerate(lengths.tolist()):
    captions[i, L:] = PAD
token_code = torch.randn(VOCAB, IMG_DIM)
images = token_code[captions].sum(1) / lengths[:, None] + 0.1 * torch.randn(N_PAIRS, IMG_DIM)


class TinyCLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, EMB)
        self.txt_proj = nn.Linear(EMB, EMB)
        self.img_proj = nn.Sequential(nn.Linear(IMG_DIM, 32), nn.GELU(), nn.Linear(32, EMB))
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
        with torch.no_grad():
            self.tok.weight[PAD].zero_()

    def encode_text(self, tokens):
        mask = (tokens != PAD).float().unsqueeze(-1)
        e = (self.tok(tokens) * mask).sum(1) / mask.sum(1)
        return F.normalize(self.txt_proj(e), dim=-1)

    def encode_image(self, x):
        return F.normalize(self.img_proj(x), dim=-1)

    def forward(self, x, tokens):
        # CLIP: the temperature is "clipped to prevent scaling the logits by more than 100";
        # with batches of 32 we cap it at 16
        self.logit_scale.clamp_(0, MAX_LOGIT_SCALE)
        scale = self.logit_scale.exp()
        img = self.encode_image(x)
        txt = self.encode_text(tokens)
        return scale * img @ txt.t()


model = TinyCLIP()
opt = torch.optim.Adam(model.parameters(), lr=2e-2)

for epoch in range(EPOCHS):
    perm = torch.randperm(N_PAIRS)
    for b in range(0, N_PAIRS, BATCH):
        idx = perm[b:b + BATCH]
        logits = model(images[idx], captions[idx])
        target = torch.arange(len(idx))
        loss = (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        # keep the padding embedding at exactly zero
        model.tok.weight[PAD] = 0.0
    print(f"epoch {epoch} loss {loss.item():.6f} logit_scale {model.logit_scale.item():.6f}")

checksum = sum(p.double().sum() for p in model.parameters()).item()
print(f"checksum {checksum:.6f}")
