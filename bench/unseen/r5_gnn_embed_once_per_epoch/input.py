# Node classification with a 2-layer GCN (Kipf & Welling) on a synthetic
# two-community graph. The node embeddings are computed once per epoch on the
# full graph, then the classifier is trained on mini-batches of labelled nodes.
# Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_NODES, N_FEAT, HIDDEN, N_CLASSES = 120, 16, 32, 3
BATCH = 20
EPOCHS = 4

labels = torch.randint(0, N_CLASSES, (N_NODES,))
same = labels[:, None] == labels[None, :]
probs = torch.where(same, torch.tensor(0.12), torch.tensor(0.02))
A = (torch.rand(N_NODES, N_NODES) < probs).float()
A = torch.triu(A, 1)
A = A + A.t() + torch.eye(N_NODES)
deg_inv_sqrt = A.sum(1).rsqrt()
A_hat = deg_inv_sqrt[:, None] * A * deg_inv_sqrt[None, :]
centroids = torch.randn(N_CLASSES, N_FEAT)
X = centroids[labels] * 0.6 + torch.randn(N_NODES, N_FEAT)
train_nodes = torch.randperm(N_NODES)[:80]


class GCNEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1 = nn.Linear(N_FEAT, HIDDEN)
        self.lin2 = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x, a_hat):
        h = F.relu(a_hat @ self.lin1(x))
        return F.relu(a_hat @ self.lin2(h))


encoder = GCNEncoder()
head = nn.Linear(HIDDEN, N_CLASSES)
opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-2)

for epoch in range(EPOCHS):
    encoder.train()
    z = encoder(X, A_hat)  # full-graph propagation
    perm = train_nodes[torch.randperm(len(train_nodes))]
    for i in range(0, len(perm), BATCH):
        idx = perm[i:i + BATCH]
        loss = F.cross_entropy(head(z[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"epoch {epoch} batch {i // BATCH} loss {loss.item():.6f}")

with torch.no_grad():
    pred = head(encoder(X, A_hat)).argmax(1)
test_mask = torch.ones(N_NODES, dtype=torch.bool)
test_mask[train_nodes] = False
print(f"test acc {(pred[test_mask] == labels[test_mask]).float().mean().item():.4f}")
params = list(encoder.parameters()) + list(head.parameters())
print(f"checksum {sum(p.double().sum() for p in params).item():.6f}")
