# PANet-style text segmentation on 1-D signals: a small conv backbone, the FPEM_FFM neck
# (two cascaded feature pyramid enhancement modules, fused by element-wise sums) and a
# segmentation head. Neck written after mmocr's fpem_ffm.py.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

SIG_LEN = 128
N_SIGNALS = 192
BATCH = 24
EPOCHS = 4
LR = 3e-3
CH = 16


def conv_bn_relu(cin, cout, stride=1):
    return nn.Sequential(nn.Conv1d(cin, cout, 3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm1d(cout), nn.ReLU(inplace=True))


class SeparableConv1d(nn.Module):
    def __init__(self, ch, stride=1):
        super().__init__()
        self.depthwise = nn.Conv1d(ch, ch, 3, stride=stride, padding=1, groups=ch)
        self.pointwise = nn.Conv1d(ch, ch, 1)
        self.bn = nn.BatchNorm1d(ch)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.pointwise(self.depthwise(x))))


class FPEM(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.up_add1 = SeparableConv1d(ch)
        self.up_add2 = SeparableConv1d(ch)
        self.up_add3 = SeparableConv1d(ch)
        self.down_add1 = SeparableConv1d(ch, 2)
        self.down_add2 = SeparableConv1d(ch, 2)
        self.down_add3 = SeparableConv1d(ch, 2)

    @staticmethod
    def _upsample_add(x, y):
        return F.interpolate(x, size=y.shape[-1]) + y

    def forward(self, c2, c3, c4, c5):
        # upsample-enhance
        c4 = self.up_add1(self._upsample_add(c5, c4))
        c3 = self.up_add2(self._upsample_add(c4, c3))
        c2 = self.up_add3(self._upsample_add(c3, c2))
        # downsample-enhance
        c3 = self.down_add1(self._upsample_add(c3, c2))
        c4 = self.down_add2(self._upsample_add(c4, c3))
        c5 = self.down_add3(self._upsample_add(c5, c4))
        return c2, c3, c4, c5


class FPEMFFM(nn.Module):
    def __init__(self, ch, fpem_repeat=2):
        super().__init__()
        self.fpems = nn.ModuleList([FPEM(ch) for _ in range(fpem_repeat)])

    def forward(self, c2, c3, c4, c5):
        for i, fpem in enumerate(self.fpems):
            c2, c3, c4, c5 = fpem(c2, c3, c4, c5)
            if i == 0:
                c2_ffm = c2
                c3_ffm = c3
                c4_ffm = c4
                c5_ffm = c5
            else:
                c2_ffm = c2_ffm + c2
                c3_ffm = c3_ffm + c3
                c4_ffm = c4_ffm + c4
                c5_ffm = c5_ffm + c5
        # FFM: upsample everything to the c2 resolution and concatenate
        size = c2_ffm.shape[-1]
        c3 = F.interpolate(c3_ffm, size=size)
        c4 = F.interpolate(c4_ffm, size=size)
        c5 = F.interpolate(c5_ffm, size=size)
        return torch.cat([c2_ffm, c3, c4, c5], dim=1)


class TextSegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn_relu(1, CH)
        self.stage2 = conv_bn_relu(CH, CH, 2)
        self.stage3 = conv_bn_relu(CH, CH, 2)
        self.stage4 = conv_bn_relu(CH, CH, 2)
        self.stage5 = conv_bn_relu(CH, CH, 2)
        self.neck = FPEMFFM(CH)
        self.head = nn.Sequential(conv_bn_relu(4 * CH, CH), nn.Conv1d(CH, 1, 1))

    def forward(self, x):
        c2 = self.stage2(self.stem(x))
        c3 = self.stage3(c2)
        c4 = self.stage4(c3)
        c5 = self.stage5(c4)
        feats = self.neck(c2, c3, c4, c5)
        return F.interpolate(self.head(feats), size=x.shape[-1])


def make_data(n):
    signals = 0.3 * torch.randn(n, 1, SIG_LEN)
    masks = torch.zeros(n, 1, SIG_LEN)
    for i in range(n):
        for _ in range(3):
            start = int(torch.randint(0, SIG_LEN - 20, (1,)))
            length = int(torch.randint(6, 20, (1,)))
            freq = 0.5 + torch.rand(1).item()
            t = torch.arange(length, dtype=torch.float32)
            signals[i, 0, start:start + length] += torch.sin(freq * t) + 0.5
            masks[i, 0, start:start + length] = 1.0
    return signals, masks


X, Y = make_data(N_SIGNALS)
model = TextSegNet()
opt = torch.optim.Adam(model.parameters(), lr=LR)

for epoch in range(EPOCHS):
    perm = torch.randperm(N_SIGNALS)
    total = 0.0
    for i in range(0, N_SIGNALS, BATCH):
        idx = perm[i:i + BATCH]
        logits = model(X[idx])
        loss = F.binary_cross_entropy_with_logits(logits, Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / (N_SIGNALS // BATCH):.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
