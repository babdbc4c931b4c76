# Small CNN on synthetic 8x8 "digits", DataLoader training loop.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 300
BATCH_SIZE = 32
N_CLASSES = 10
EPOCHS = 3
LR = 1e-3


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, N_CLASSES)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)), inplace=True)
        x = F.relu(self.conv2(x), inplace=True)
        x = F.max_pool2d(x, 2)
        x = x.view(BATCH_SIZE, -1)
        return self.fc(x)


protos = torch.randn(N_CLASSES, 1, 8, 8)
labels = torch.randint(0, N_CLASSES, (N_SAMPLES,))
images = protos[labels] + 0.8 * torch.randn(N_SAMPLES, 1, 8, 8)
loader = DataLoader(TensorDataset(images, labels), batch_size=BATCH_SIZE, shuffle=True,
                    generator=torch.Generator().manual_seed(0))

model = ConvNet()
opt = torch.optim.Adam(model.parameters(), lr=LR)

for epoch in range(EPOCHS):
    running, seen = 0.0, 0
    for xb, yb in loader:
        out = model(xb)
        loss = F.cross_entropy(out, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss.item() * xb.size(0)
        seen += xb.size(0)
    print(f"epoch {epoch} loss {running / seen:.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
