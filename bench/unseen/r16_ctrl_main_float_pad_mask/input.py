"""Variable-length set classifier: attention pooling + mean pooling over valid items.
The padding mask is built once per batch and shared by both pooling heads."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class TokenEncoder(nn.Module):
    def __init__(self, feat, d):
        super().__init__()
        self.fc = nn.Linear(feat, d)

    def forward(self, x):
        return F.gelu(self.fc(x))


class AttnPoolMixin:
    def attn_pool(self, h, pad):
        scores = self.score(h).squeeze(-1)
        scores.masked_fill_(pad, float("-inf"))
        return (scores.softmax(-1).unsqueeze(-1) * h).sum(1)

    def mean_pool(self, h, pad):
        keep = 1.0 - pad
        return (h * keep.unsqueeze(-1)).sum(1) / keep.sum(1, keepdim=True)


class DualPoolClassifier(AttnPoolMixin, TokenEncoder):
    def __init__(self, feat, d, classes):
        super().__init__(feat, d)
        self.score = nn.Linear(d, 1)
        self.head = nn.Linear(2 * d, classes)

    def forward(self, x, pad):
        h = super().forward(x)
        return self.head(torch.cat([self.attn_pool(h, pad), self.mean_pool(h, pad)], -1))


def collate(x, lengths, idx):
    L = x.shape[1]
    pad = (torch.arange(L)[None, :] >= lengths[idx, None]).float()  # 1.0 = padding
    return x[idx], pad


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--width", type=int, default=16)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(8)
    n, L, f = 320, 9, 6
    x = torch.randn(n, L, f, generator=g)
    lengths = torch.randint(2, L + 1, (n,), generator=g)
    valid = torch.arange(L)[None, :] < lengths[:, None]
    y = ((x[..., 0] * valid).sum(1) > 0).long()
    model = DualPoolClassifier(f, args.width, 2)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(n)
        for i in range(0, n, args.batch):
            idx = perm[i:i + args.batch]
            xb, pad = collate(x, lengths, idx)
            loss = F.cross_entropy(model(xb, pad), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 8 == 0:
                print(f"epoch {epoch} step {step:3d} loss {loss.item():.5f}")
    with torch.no_grad():
        xb, pad = collate(x, lengths, torch.arange(n))
        acc = (model(xb, pad).argmax(1) == y).float().mean().item()
    print(f"train acc {acc:.4f} score-norm {model.score.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
