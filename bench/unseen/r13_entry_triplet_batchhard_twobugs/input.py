"""Train an embedding with batch-hard triplet loss; evaluate Recall@1 on unseen identities."""
import argparse

import torch

from metric import BatchHardTripletLoss, EmbeddingNet, PKSampler, make_identities


@torch.no_grad()
def recall_at_1(model, x, y):
    model.eval()
    z = model(x)
    d = torch.cdist(z, z)
    d.fill_diagonal_(float("inf"))
    model.train()
    return (y[d.argmin(1)] == y).float().mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--p", type=int, default=8)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--margin", type=float, default=0.3)
    p.add_argument("--lr", type=float, default=1e-3)
    args = p.parse_args()

    torch.manual_seed(0)
    x_tr, y_tr = make_identities(40, 12, 24, seed=0)
    x_te, y_te = make_identities(20, 8, 24, seed=1)
    model = EmbeddingNet(24, 64, 16)
    criterion = BatchHardTripletLoss(args.margin)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sampler = PKSampler(y_tr, args.p, args.k, torch.Generator().manual_seed(0))

    print(f"step    0  recall@1 {recall_at_1(model, x_te, y_te):.4f}")
    for step in range(1, args.steps + 1):
        idx = sampler.sample()
        loss, active = criterion(model(x_tr[idx]), y_tr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}  active {active.item():.4f}  "
                  f"recall@1 {recall_at_1(model, x_te, y_te):.4f}")
    print(f"param checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
