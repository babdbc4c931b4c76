# Single-label classifier trained with the Asymmetric Loss (ASL, Ridnik et al. 2021),
# the single-label variant as it shipped in timm before
# https://github.com/huggingface/pytorch-image-models/pull/1500 .
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

NUM_SAMPLES = 512
IN_DIM = 32
NUM_CLASSES = 10
HIDDEN = 64
BATCH_SIZE = 64
EPOCHS = 4
LR = 2e-3
LABEL_SMOOTHING = 0.1


class AsymmetricLossSingleLabel(nn.Module):
    def __init__(self, gamma_pos=1, gamma_neg=4, eps: float = 0.1, reduction='mean'):
        super(AsymmetricLossSingleLabel, self).__init__()
        self.eps = eps
        self.logsoftmax = nn.LogSoftmax(dim=-1)
        self.targets_classes = []  # prevent gpu repeated memory allocation
        self.gamma_pos = gamma_pos
        self.gamma_neg = gamma_neg
        self.reduction = reduction

    def forward(self, inputs, target):
        num_classes = inputs.size()[-1]
        log_preds = self.logsoftmax(inputs)
        self.targets_classes = torch.zeros_like(inputs).scatter_(1, target.long().unsqueeze(1), 1)

        # ASL weights
        targets = self.targets_classes
        anti_targets = 1 - targets
        xs_pos = torch.exp(log_preds)
        xs_neg = 1 - xs_pos
        xs_pos = xs_pos * targets
        xs_neg = xs_neg * anti_targets
        asymmetric_w = torch.pow(1 - xs_pos - xs_neg,
                                 self.gamma_pos * targets + self.gamma_neg * anti_targets)
        log_preds = log_preds * asymmetric_w

        if self.eps > 0:  # label smoothing
            self.targets_classes.mul_(1 - self.eps).add_(self.eps / num_classes)

        # loss calculation
        loss = - self.targets_classes.mul(log_preds)

        loss = loss.sum(dim=-1)
        if self.reduction == 'mean':
            loss = loss.mean()
        return loss


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(IN_DIM, HIDDEN), nn.BatchNorm1d(HIDDEN), nn.ReLU(inplace=True),
            nn.Linear(HIDDEN, HIDDEN), nn.ReLU(inplace=True),
        )
        self.head = nn.Linear(HIDDEN, NUM_CLASSES)

    def forward(self, x):
        return self.head(self.body(x))


# synthetic data: labels from a random linear teacher
X = torch.randn(NUM_SAMPLES, IN_DIM)
teacher = torch.randn(IN_DIM, NUM_CLASSES)
y = (X @ teacher + 0.5 * torch.randn(NUM_SAMPLES, NUM_CLASSES)).argmax(dim=1)
loader = DataLoader(TensorDataset(X, y), batch_size=BATCH_SIZE, shuffle=True,
                    generator=torch.Generator().manual_seed(0))

model = Net()
criterion = AsymmetricLossSingleLabel(eps=LABEL_SMOOTHING)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-4)

for epoch in range(EPOCHS):
    model.train()
    total, n = 0.0, 0
    for xb, yb in loader:
        logits = model(xb)
        loss = criterion(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * xb.size(0)
        n += xb.size(0)
    print(f"epoch {epoch} loss {total / n:.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
