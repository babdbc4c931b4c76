# Small residual classifier with an attention-pooling head, trained with label smoothing,
# weight clipping and an EMA copy of the weights. Lots of in-place operations, all of them
# on tensors that no backward formula needs.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

SEQ = 16
IN_CH = 4
CH = 32
N_CLASSES = 5
N_SAMPLES = 320
BATCH = 32
EPOCHS = 4
LR = 2e-3
SMOOTHING = 0.1
EMA_DECAY = 0.9
CLIP_VALUE = 0.5


class BasicBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv1d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm1d(ch)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv1d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm1d(ch)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)        # batch norm saves its input, not its output
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity             # bn2's output is not saved by anyone
        out = self.relu(out)
        return out


class AttnPool(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.query = nn.Parameter(torch.randn(ch) / ch ** 0.5)
        self.norm = nn.LayerNorm(ch)

    def forward(self, h, pad_mask):
        h = self.norm(h)
        h = F.silu(h, inplace=True)  # layer norm saves its input and statistics only
        scores = h @ self.query      # matmul does not save its output
        scores.masked_fill_(pad_mask, float("-inf"))
        weights = scores.softmax(dim=1)
        return (weights.unsqueeze(-1) * h).sum(dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv1d(IN_CH, CH, 3, padding=1)
        self.blocks = nn.Sequential(BasicBlock(CH), BasicBlock(CH))
        self.pool = AttnPool(CH)
        self.fc = nn.Linear(CH, N_CLASSES)

    def forward(self, x, pad_mask):
        h = self.stem(x)
        h.relu_()                   # conv output: not saved
        h = self.blocks(h).transpose(1, 2)
        return self.fc(self.pool(h, pad_mask))


def smooth_targets(y, n, eps):
    with torch.no_grad():
        t = torch.full((y.shape[0], n), eps / (n - 1))
        t.scatter_(1, y.unsqueeze(1), 1.0 - eps)
    return t


X = torch.randn(N_SAMPLES, IN_CH, SEQ)
lengths = torch.randint(SEQ // 2, SEQ + 1, (N_SAMPLES,))
pad = torch.arange(SEQ)[None, :] >= lengths[:, None]
X.masked_fill_(pad[:, None, :], 0.0)
proj = torch.randn(IN_CH, N_CLASSES)
y = (X.sum(dim=2) @ proj).argmax(dim=1)
loader = DataLoader(TensorDataset(X, pad, y), batch_size=BATCH, shuffle=True,
                    generator=torch.Generator().manual_seed(0))

model = Net()
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)
opt = torch.optim.Adam(model.parameters(), lr=LR)

for epoch in range(EPOCHS):
    model.train()
    running = 0.0
    for xb, pb, yb in loader:
        logits = model(xb, pb)
        target = smooth_targets(yb, N_CLASSES, SMOOTHING)
        loss = torch.sum(-target * F.log_softmax(logits, dim=1), dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for p in model.fc.parameters():
                p.clamp_(-CLIP_VALUE, CLIP_VALUE)
            for p_ema, p in zip(ema.parameters(), model.parameters()):
                p_ema.mul_(EMA_DECAY).add_(p, alpha=1 - EMA_DECAY)
            for b_ema, b in zip(ema.buffers(), model.buffers()):
                b_ema.copy_(b)
        running += loss.item()
    ema.eval()
    with torch.no_grad():
        acc = (ema(X, pad).argmax(1) == y).float().mean().item()
    print(f"epoch {epoch} loss {running / len(loader):.6f} ema_acc {acc:.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
