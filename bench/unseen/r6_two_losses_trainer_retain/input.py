"""Classifier with an auxiliary reconstruction head on a shared encoder; the two losses
are backpropagated separately (each is logged with its own gradient norm)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AuxAutoencoderClassifier(nn.Module):
    def __init__(self, in_dim=20, latent=8, n_classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, in_dim))
        self.classifier = nn.Linear(latent, n_classes)


def grad_norm(module):
    return torch.sqrt(sum((p.grad ** 2).sum() for p in module.parameters() if p.grad is not None)).item()


class Trainer:
    def __init__(self, model, lr=3e-3, rec_weight=0.5, batch_size=32, epochs=5):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.rec_weight = rec_weight
        self.batch_size = batch_size
        self.epochs = epochs
        self.history = []

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        z = self.model.encoder(x)
        loss_cls = F.cross_entropy(self.model.classifier(z), y)
        loss_rec = F.mse_loss(self.model.decoder(z), x)
        loss_cls.backward()
        g_cls = grad_norm(self.model.encoder)
        (self.rec_weight * loss_rec).backward()
        g_total = grad_norm(self.model.encoder)
        self.optimizer.step()
        return loss_cls.item(), loss_rec.item(), g_cls, g_total

    def train_epoch(self, x, y):
        self.model.train()
        perm = torch.randperm(x.size(0))
        stats = []
        for i in range(0, x.size(0), self.batch_size):
            idx = perm[i:i + self.batch_size]
            stats.append(self.train_step(x[idx], y[idx]))
        return [sum(s) / len(stats) for s in zip(*stats)]

    @torch.no_grad()
    def evaluate(self, x, y):
        z = self.model.encoder(x)
        acc = (self.model.classifier(z).argmax(1) == y).float().mean().item()
        return acc, F.mse_loss(self.model.decoder(z), x).item()

    def fit(self, train, val):
        for epoch in range(self.epochs):
            cls, rec, g_cls, g_total = self.train_epoch(*train)
            acc, val_rec = self.evaluate(*val)
            self.history.append((cls, rec))
            print(f"epoch {epoch} cls {cls:.4f} rec {rec:.4f} |g_enc| cls {g_cls:.4f} total {g_total:.4f} "
                  f"val acc {acc:.4f} val rec {val_rec:.4f}")


def make_data(n, basis, gen):
    codes = torch.randn(n, basis.size(0), generator=gen)
    x = torch.tanh(codes @ basis) + 0.1 * torch.randn(n, basis.size(1), generator=gen)
    y = (codes[:, 0] > 0.5).long() + (codes[:, 1] > 0).long()
    return x, y


if __name__ == "__main__":
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    basis = torch.randn(6, 20, generator=gen)
    train = make_data(512, basis, gen)
    val = make_data(256, basis, gen)
    model = AuxAutoencoderClassifier()
    Trainer(model).fit(train, val)
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")
