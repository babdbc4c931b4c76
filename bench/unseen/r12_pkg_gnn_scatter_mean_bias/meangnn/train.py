import argparse

import torch
import torch.nn.functional as F

from .data import stochastic_block_graph
from .model import MeanGNN


def accuracy(logits, y, mask):
    return (logits[mask].argmax(-1) == y[mask]).float().mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    x, edge_index, y, train_mask, test_mask = stochastic_block_graph(seed=args.seed)
    print(f"nodes {x.size(0)} edges {edge_index.size(1)} features {x.size(1)}")
    model = MeanGNN(x.size(1), args.hidden, int(y.max()) + 1)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    for epoch in range(1, args.epochs + 1):
        model.train()
        opt.zero_grad()
        logits = model(x, edge_index)
        loss = F.cross_entropy(logits[train_mask], y[train_mask])
        loss.backward()
        opt.step()
        if epoch % 10 == 0:
            model.eval()
            with torch.no_grad():
                logits = model(x, edge_index)
            print(f"epoch {epoch:3d} loss {loss.item():.5f} "
                  f"train_acc {accuracy(logits, y, train_mask):.4f} test_acc {accuracy(logits, y, test_mask):.4f}")
    print(f"bias norms {model.conv1.bias.norm().item():.5f} {model.conv2.bias.norm().item():.5f}")


if __name__ == "__main__":
    main()
