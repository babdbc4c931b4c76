import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)

num_nodes, num_feats, num_classes = 40, 12, 4
x = torch.randn(num_nodes, num_feats)
# random undirected graph
src = torch.randint(0, num_nodes, (120,))
dst = torch.randint(0, num_nodes, (120,))
edge_index = torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], dim=1)
labels = torch.randint(0, num_classes, (num_nodes,))


class MessagePassing(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, h, edge_index):
        s, d = edge_index
        h = torch.tanh(self.lin(h))
        deg = torch.zeros(h.size(0)).index_add_(0, d, torch.ones(d.size(0))).clamp(min=1)
        msgs = h[s] / deg[d].unsqueeze(1)
        # add neighbour messages into the node states (self loop + mean aggregation)
        h.index_add_(0, d, msgs)
        return h


class GNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = MessagePassing(num_feats, 32)
        self.l2 = MessagePassing(32, 32)
        self.cls = nn.Linear(32, num_classes)

    def forward(self, x, edge_index):
        h = self.l1(x, edge_index)
        h = self.l2(h, edge_index)
        return self.cls(h)


model = GNN()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(50):
    out = model(x, edge_index)
    loss = F.cross_entropy(out, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        acc = (out.argmax(1) == labels).float().mean().item()
        print(f"epoch {epoch} loss {loss.item():.6f} acc {acc:.3f}")
print("final", loss.item())
