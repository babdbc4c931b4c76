import torch
import torch.nn as nn
import torch.nn.functional as F


class EntityTable(nn.Module):
    """Embedding table whose rows are projected back to the unit sphere after each update."""

    def __init__(self, n, dim):
        super().__init__()
        self.emb = nn.Embedding(n + 1, dim, padding_idx=n)

    def forward(self, ids):
        return self.emb(ids)

    @torch.no_grad()
    def renorm_(self):
        w = self.emb.weight[:-1]
        w.div_(w.norm(dim=1, keepdim=True).clamp(min=1e-6))


class FakeQuant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bits):
        if bits >= 32:
            return x.clone()                    # never hand the input back as-is
        scale = (2 ** (bits - 1) - 1) / x.abs().max().clamp(min=1e-8)
        return torch.round(x * scale) / scale

    @staticmethod
    def backward(ctx, g):
        return g, None


class ResBlock(nn.Module):
    def __init__(self, width, bits):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.bn = nn.BatchNorm1d(width)
        self.act = nn.ReLU(inplace=True)        # after BatchNorm: BN saves its input, not output
        self.fc2 = nn.Linear(width, width)
        self.bits = bits

    def forward(self, x):
        out = self.act(self.bn(self.fc(x)))
        out = self.fc2(out)
        out.relu_()                             # Linear output is not saved by addmm
        out = FakeQuant.apply(out, self.bits)
        out += x                                # FakeQuant output is a fresh tensor
        return out


class MeanAct(nn.Module):
    def forward(self, x):
        return torch.clamp(torch.exp(x), min=1e-5, max=1e6)


class DispAct(nn.Module):
    def forward(self, x):
        return F.softplus(x).clamp_(min=1e-4, max=1e4)   # softplus saves its input only
