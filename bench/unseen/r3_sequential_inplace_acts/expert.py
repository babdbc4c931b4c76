# Answer classifier of a bottom-up-attention VQA model (fused feature -> answer logits).
# Based on https://github.com/BierOne/bottom-up-attention-vqa/issues/6 , where the
# classifier's nn.Dropout(dropout, inplace=True) broke backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)

N_ANS = 12


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(in_dim, hid_dim),
            nn.LeakyReLU(0.1, inplace=True),
            nn.Dropout(dropout, inplace=False),
            nn.Linear(hid_dim, hid_dim),
            nn.BatchNorm1d(hid_dim),
            nn.ReLU(inplace=True),
            nn.Linear(hid_dim, hid_dim),
            nn.Tanh(),
            nn.Dropout(dropout, inplace=False),
            nn.Linear(hid_dim, out_dim),
        )

    def forward(self, x):
        return self.main(x)


class VQAHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.v_proj = nn.Linear(24, 32)
        self.q_proj = nn.Linear(16, 32)
        self.classifier = SimpleClassifier(32, 48, N_ANS, 0.3)

    def forward(self, v, q):
        joint = self.v_proj(v) * self.q_proj(q)
        return self.classifier(joint)


model = VQAHead()
opt = torch.optim.Adamax(model.parameters(), lr=2e-3)
V = torch.randn(256, 24)
Q = torch.randn(256, 16)
# soft VQA scores in [0, 1]
target = torch.rand(256, N_ANS).pow(3)

model.train()
for step in range(30):
    idx = torch.randint(0, 256, (32,))
    logits = model(V[idx], Q[idx])
    loss = F.binary_cross_entropy_with_logits(logits, target[idx]) * N_ANS
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.6f}")

model.eval()
with torch.no_grad():
    print(f"eval loss {F.binary_cross_entropy_with_logits(model(V, Q), target).item() * N_ANS:.6f}")
