# Multi-task model (one classification and one regression head on a shared trunk)
# trained with SAM (sam.py, after davda54/sam): two forward-backward passes per batch.
import torch
import torch.nn as nn
import torch.nn.functional as F

from sam import SAM

torch.manual_seed(0)

IN_DIM = 20
N_CLASSES = 5
N_TRAIN = 320
BATCH = 32
EPOCHS = 3
LR = 0.05
RHO = 0.05
NUM_TASKS = 2


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(IN_DIM, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.cls_head = nn.Linear(64, N_CLASSES)
        self.reg_head = nn.Linear(64, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.reg_head(h).squeeze(-1)


def get_loss(output, target, t):
    logits, reg = output
    if t == 0:
        return F.cross_entropy(logits, target["label"])
    return F.mse_loss(reg, target["value"])


X = torch.randn(N_TRAIN, IN_DIM)
W = torch.randn(IN_DIM, N_CLASSES)
labels = (X @ W).argmax(dim=1)
values = (X[:, :5].sum(dim=1) + 0.1 * torch.randn(N_TRAIN)).tanh()

model = MultiTaskNet()
optimizer = SAM(model.parameters(), torch.optim.SGD, rho=RHO, lr=LR, momentum=0.9)

for epoch in range(EPOCHS):
    perm = torch.randperm(N_TRAIN)
    loss_sum = [0.0] * NUM_TASKS
    for i in range(0, N_TRAIN, BATCH):
        idx = perm[i:i + BATCH]
        image = X[idx]
        target = {"label": labels[idx], "value": values[idx]}

        # first forward-backward pass
        output = model(image)
        loss = 0
        for t in range(NUM_TASKS):
            loss_t = get_loss(output, target, t)
            loss += loss_t
            loss_sum[t] += loss_t.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.first_step(zero_grad=True)

        # second forward-backward pass
        output = model(image)
        loss = 0
        for t in range(NUM_TASKS):
            loss_t = get_loss(output, target, t)
            loss += loss_t
        loss.backward()
        optimizer.second_step(zero_grad=True)
    nb = N_TRAIN // BATCH
    print(f"epoch {epoch} ce {loss_sum[0] / nb:.6f} mse {loss_sum[1] / nb:.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
