# Train a small 1-D CNN with BatchNorm, fold each BatchNorm into the preceding
# conv for deployment, then fine-tune the folded network for a few more steps
# with the same optimizer. Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N, L, N_CLASSES = 256, 32, 3
BATCH = 32
TRAIN_EPOCHS, FINETUNE_EPOCHS = 3, 2

X = torch.randn(N, 1, L)
freq = torch.randint(0, N_CLASSES, (N,))
t = torch.arange(L).float()
X += torch.sin(t * (freq[:, None] + 1) * 0.4).unsqueeze(1)
y = freq


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 8, 5, padding=2)
        self.bn1 = nn.BatchNorm1d(8)
        self.conv2 = nn.Conv1d(8, 8, 5, padding=2)
        self.bn2 = nn.BatchNorm1d(8)
        self.fc = nn.Linear(8, N_CLASSES)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(x.mean(-1))


def fold_bn(conv, bn):
    """conv followed by bn (eval statistics) -> a single conv."""
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    w_fold = conv.weight * scale.view(-1, 1, 1)
    b_fold = (conv.bias - bn.running_mean) * scale + bn.bias
    with torch.no_grad():
        conv.weight[:, :, :] = w_fold
        conv.bias.copy_(b_fold)


def run_epoch(model, opt, tag, epoch):
    perm = torch.randperm(N)
    tot = 0.0
    for b in range(0, N, BATCH):
        idx = perm[b:b + BATCH]
        loss = F.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot += loss.item() * len(idx)
    print(f"{tag} epoch {epoch} loss {tot / N:.6f}")


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(TRAIN_EPOCHS):
    model.train()
    run_epoch(model, opt, "train", epoch)

model.eval()
with torch.no_grad():
    before = model(X)
fold_bn(model.conv1, model.bn1)
fold_bn(model.conv2, model.bn2)
model.bn1, model.bn2 = nn.Identity(), nn.Identity()
with torch.no_grad():
    after = model(X)
print(f"fold max abs diff {(before - after).abs().max().item():.6f}")

for epoch in range(FINETUNE_EPOCHS):
    run_epoch(model, opt, "finetune", epoch)

with torch.no_grad():
    acc = (model(X).argmax(1) == y).float().mean().item()
print(f"acc {acc:.4f}")
print(f"checksum {sum(p.double().sum() for p in model.parameters()).item():.6f}")
