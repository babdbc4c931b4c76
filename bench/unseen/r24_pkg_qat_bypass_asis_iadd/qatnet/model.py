import torch.nn as nn

from .quant import QuantAct


class QResBlock(nn.Module):
    def __init__(self, width, bits, alpha_init):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.bn1 = nn.BatchNorm1d(width)
        self.q1 = QuantAct(bits, alpha_init)
        self.fc2 = nn.Linear(width, width)
        self.bn2 = nn.BatchNorm1d(width)
        self.q2 = QuantAct(bits, alpha_init)

    def forward(self, x):
        out = self.q1(self.bn1(self.fc1(x)))
        out = self.q2(self.bn2(self.fc2(out)))
        out += x
        return out


class QResMLP(nn.Module):
    def __init__(self, n_in, n_out, width, act_bits, alpha_init):
        super().__init__()
        self.stem = nn.Linear(n_in, width)
        self.blocks = nn.Sequential(*[QResBlock(width, b, alpha_init) for b in act_bits])
        self.head = nn.Linear(width, n_out)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))

    def alphas(self):
        return [m.alpha for m in self.modules() if hasattr(m, "alpha")]
