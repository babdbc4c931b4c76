import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class AttnPoolClassifier(nn.Module):
    def __init__(self, d_in, d, n_cls):
        super().__init__()
        self.proj = nn.Linear(d_in, d)
        self.query = nn.Parameter(torch.randn(d) / math.sqrt(d))
        self.head = nn.Linear(d, n_cls)
        self.d = d

    def forward(self, x, hard=False):
        h = torch.relu(self.proj(x))                      # (B, T, d)
        scores = h @ self.query / math.sqrt(self.d)       # (B, T)
        attn = torch.softmax(scores, dim=-1)
        if hard:
            # sparsify attention for the final epochs, then renormalise
            attn = attn.masked_fill(attn < 0.05, 0)
            attn = attn / attn.sum(dim=-1, keepdim=True)
        pooled = (attn.unsqueeze(-1) * h).sum(dim=1)
        return self.head(pooled)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=1000)
    p.add_argument("--hard-epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--seq", type=int, default=48)
    args = p.parse_args()

    torch.manual_seed(11)
    X = torch.randn(args.batch, args.seq, 16)
    y = (X[:, :, 0].max(dim=1).values > 2.0).long()
    model = AttnPoolClassifier(16, 128, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        hard = epoch >= args.epochs - args.hard_epochs
        loss = F.cross_entropy(model(X, hard=hard), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if epoch % 100 == 0 or epoch == args.epochs - 1:
            print(f"epoch {epoch} loss {loss.item():.6f}")
    print("done")


if __name__ == "__main__":
    main()
