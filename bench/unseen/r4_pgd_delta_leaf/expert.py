# PGD adversarial training (Madry et al.) of a small CNN on synthetic 12x12 images.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_IMAGES = 384
IMG = 12
N_CLASSES = 3
BATCH = 48
EPOCHS = 4
LR = 2e-3
EPS = 0.05
ALPHA = 0.02
PGD_STEPS = 3


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 3 * 3, N_CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


# synthetic images: class-specific blurred templates plus noise, in [0, 1]
templates = torch.rand(N_CLASSES, 1, IMG, IMG)
templates = F.avg_pool2d(templates, 3, stride=1, padding=1)
labels = torch.randint(0, N_CLASSES, (N_IMAGES,))
images = (templates[labels] + 0.15 * torch.randn(N_IMAGES, 1, IMG, IMG)).clamp(0, 1)
loader = DataLoader(TensorDataset(images, labels), batch_size=BATCH, shuffle=True,
                    generator=torch.Generator().manual_seed(0))

model = SmallCNN()
opt = torch.optim.Adam(model.parameters(), lr=LR)

for epoch in range(EPOCHS):
    total, correct, seen = 0.0, 0, 0
    for xb, yb in loader:
        # inner maximisation: L-inf PGD from a random start
        delta = torch.zeros_like(xb).uniform_(-EPS, EPS)
        delta.requires_grad = True
        for _ in range(PGD_STEPS):
            adv_loss = F.cross_entropy(model(xb + delta), yb)
            adv_loss.backward()
            with torch.no_grad():
                delta += ALPHA * delta.grad.sign()
                delta.clamp_(-EPS, EPS)
            delta.grad.zero_()
        # outer minimisation on the adversarial batch
        opt.zero_grad()
        out = model(xb + delta)
        loss = F.cross_entropy(out, yb)
        loss.backward()
        opt.step()
        total += loss.item() * xb.size(0)
        correct += (out.argmax(1) == yb).sum().item()
        seen += xb.size(0)
    print(f"epoch {epoch} adv_loss {total / seen:.6f} adv_acc {correct / seen:.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
