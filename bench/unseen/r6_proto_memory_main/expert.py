"""Cosine prototype classifier whose class prototypes are a momentum memory of the
per-class batch means (prototype-memory / PCL-style), trained with cross-entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ProtoNet(nn.Module):
    def __init__(self, in_dim, emb_dim, n_classes, momentum=0.9, temperature=0.1):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, emb_dim))
        self.n_classes = n_classes
        self.momentum = momentum
        self.temperature = temperature
        self.prototypes = torch.zeros(n_classes, emb_dim)

    def forward(self, x, y=None):
        z = F.normalize(self.encoder(x), dim=1)
        if self.training and y is not None:
            onehot = F.one_hot(y, self.n_classes).float()
            counts = onehot.sum(0).unsqueeze(1)
            batch_means = onehot.t() @ z / counts.clamp(min=1)
            present = (counts > 0).float()
            updated = self.momentum * self.prototypes + (1 - self.momentum) * batch_means
            self.prototypes = present * updated + (1 - present) * self.prototypes
        return z @ F.normalize(self.prototypes, dim=1).t() / self.temperature


def make_data(n, centers):
    n_classes, in_dim = centers.shape
    y = torch.randint(0, n_classes, (n,))
    x = centers[y] + torch.randn(n, in_dim)
    return torch.tanh(x), y


def main():
    torch.manual_seed(0)
    in_dim, emb_dim, n_classes = 16, 24, 6
    epochs, batch_size = 5, 32
    centers = torch.randn(n_classes, in_dim)
    x_train, y_train = make_data(640, centers)
    x_test, y_test = make_data(320, centers)

    model = ProtoNet(in_dim, emb_dim, n_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(x_train.size(0))
        total = 0.0
        for i in range(0, x_train.size(0), batch_size):
            idx = perm[i:i + batch_size]
            logits = model(x_train[idx], y_train[idx])
            loss = F.cross_entropy(logits, y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            model.prototypes = model.prototypes.detach()
            total += loss.item() * idx.numel()
        model.eval()
        with torch.no_grad():
            acc = (model(x_test).argmax(1) == y_test).float().mean().item()
        print(f"epoch {epoch} loss {total / x_train.size(0):.4f} test acc {acc:.4f}")

    print(f"prototype norm {model.prototypes.norm(dim=1).mean().item():.4f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
