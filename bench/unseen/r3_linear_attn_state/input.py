# Causal linear attention run as an RNN (one token at a time), trained on a toy
# copy-the-sum task. Based on https://github.com/idiap/fast-transformers/pull/10
# ("Replace inplace operations in recurrent linear attention": the in-place updates of
# the state Si and the normaliser Zi raised the inplace-operation error in training).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)

D_IN, D, T, B = 6, 16, 12, 32


def feature_map(x):
    return F.elu(x) + 1


class RecurrentLinearAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, D)
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.eps = 1e-6

    def forward(self, x):
        b, t, _ = x.shape
        Si = torch.zeros(b, D, D)
        Zi = torch.zeros(b, D)
        outs = []
        for i in range(t):
            q = feature_map(self.q(x[:, i]))
            k = feature_map(self.k(x[:, i]))
            v = self.v(x[:, i])
            Si += torch.einsum("nd,nm->ndm", k, v)
            Zi += k
            num = torch.einsum("nd,ndm->nm", q, Si)
            den = torch.einsum("nd,nd->n", q, Zi) + self.eps
            outs.append(num / den.unsqueeze(-1))
        return torch.stack(outs, dim=1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(D_IN, D)
        self.attn = RecurrentLinearAttention()
        self.out = nn.Linear(D, 1)

    def forward(self, x):
        h = self.inp(x)
        return self.out(h + self.attn(h)).squeeze(-1)


model = Model()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
X = torch.randn(128, T, D_IN)
Y = X[..., 0].cumsum(1) / torch.arange(1, T + 1)  # running mean of feature 0

for step in range(15):
    idx = torch.randint(0, 128, (B,))
    pred = model(X[idx])
    loss = F.mse_loss(pred, Y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
