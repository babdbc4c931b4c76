# Intent classifier on bag-of-words features, 13 intents. The label column of
# our export is 1-based (intent ids 1..13). Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HIDDEN, NUM_CLASSES = 60, 32, 13
N, BATCH, EPOCHS = 260, 32, 4

intent_ids = torch.randint(1, NUM_CLASSES + 1, (N,))          # 1..13, as exported
keywords = torch.randint(0, VOCAB, (NUM_CLASSES + 1, 4))
bow = torch.zeros(N, VOCAB)
for i in range(N):
    bow[i, keywords[intent_ids[i]]] += 1.0
    bow[i, torch.randint(0, VOCAB, (6,))] += 1.0
# sort so that batches are "by export order": intents grouped loosely
order = torch.argsort(intent_ids + 0.9 * torch.rand(N) * NUM_CLASSES)
bow, intent_ids = bow[order], intent_ids[order]


class IntentNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(VOCAB, HIDDEN)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(HIDDEN, NUM_CLASSES)

    def forward(self, x):
        x = x / x.sum(1, keepdim=True).clamp_min_(1.0)
        h = F.relu(self.fc1(x), inplace=True)
        return self.fc2(self.drop(h))


model = IntentNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(EPOCHS):
    model.train()
    for b in range(0, N, BATCH):
        xb, yb = bow[b:b + BATCH], intent_ids[b:b + BATCH]
        logits = model(xb)
        loss = F.cross_entropy(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"epoch {epoch} batch {b // BATCH} loss {loss.item():.6f}")

model.eval()
with torch.no_grad():
    acc = (model(bow).argmax(1) == intent_ids).float().mean().item()
print(f"train acc {acc:.4f}")
print(f"checksum {sum(p.double().sum() for p in model.parameters()).item():.6f}")
