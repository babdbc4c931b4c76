"""1D ResNet for synthetic multi-lead signal classification, with checkpointing and a
CSV training log. Run: python input.py [--epochs N] [--out_dir DIR]"""
import argparse
import csv
import os

import torch
import torch.nn.functional as F

from models import ResNet1d

HERE = os.path.dirname(os.path.abspath(__file__))


def make_signals(n, n_leads, length, n_classes, gen):
    t = torch.linspace(0, 1, length)
    labels = torch.randint(0, n_classes, (n,), generator=gen)
    freq = 3.0 + 2.0 * labels.float()
    phase = 6.28 * torch.rand(n, n_leads, 1, generator=gen)
    x = torch.sin(6.28 * freq[:, None, None] * t + phase)
    x = x + 0.8 * torch.randn(n, n_leads, length, generator=gen)
    return x, labels


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args
        self.optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
        self.ckpt_dir = os.path.join(HERE, args.out_dir)
        os.makedirs(self.ckpt_dir, exist_ok=True)
        self.log_path = os.path.join(HERE, args.log)
        self.best_acc = 0.0

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train_epoch(self, x, y):
        self.model.train()
        perm = torch.randperm(x.size(0))
        losses = []
        for i in range(0, x.size(0), self.args.batch_size):
            idx = perm[i:i + self.args.batch_size]
            losses.append(self.train_step(x[idx], y[idx]))
        return sum(losses) / len(losses)

    @torch.no_grad()
    def evaluate(self, x, y):
        self.model.eval()
        return (self.model(x).argmax(1) == y).float().mean().item()

    def save_checkpoint(self, epoch, name):
        torch.save({"epoch": epoch, "model": self.model.state_dict(),
                    "optimizer": self.optimizer.state_dict()}, os.path.join(self.ckpt_dir, name))

    def fit(self, train, val):
        with open(self.log_path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["epoch", "train_loss", "val_acc"])
            for epoch in range(self.args.epochs):
                train_loss = self.train_epoch(*train)
                val_acc = self.evaluate(*val)
                writer.writerow([epoch, f"{train_loss:.4f}", f"{val_acc:.4f}"])
                print(f"epoch {epoch} loss {train_loss:.4f} val acc {val_acc:.4f}")
                self.save_checkpoint(epoch, "last.pt")
                if val_acc > self.best_acc:
                    self.best_acc = val_acc
                    self.save_checkpoint(epoch, "best.pt")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out_dir", type=str, default="checkpoints")
    parser.add_argument("--log", type=str, default="train_log.csv")
    args = parser.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    train = make_signals(384, 3, 128, 4, gen)
    val = make_signals(128, 3, 128, 4, gen)
    model = ResNet1d(in_ch=3, n_classes=4)
    trainer = Trainer(model, args)
    trainer.fit(train, val)
    print(f"best val acc {trainer.best_acc:.4f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
