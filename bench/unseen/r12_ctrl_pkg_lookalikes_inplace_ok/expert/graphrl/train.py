import argparse
import copy

import torch
import torch.nn.functional as F

from .layers import Policy
from .optim import SignSGD


def make_graph(n, seed):
    g = torch.Generator().manual_seed(seed)
    src = torch.arange(n).repeat_interleave(3)
    dst = torch.randint(0, n, (3 * n,), generator=g)
    return torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--nodes", type=int, default=48)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    n, T, C, A = args.nodes, 6, 4, 5
    edge_index = make_graph(n, args.seed)
    policy = Policy(C, 32, A)
    ema = copy.deepcopy(policy).requires_grad_(False)
    opt = SignSGD(policy.parameters(), lr=2e-3, momentum=0.9, weight_decay=1e-4)
    g = torch.Generator().manual_seed(args.seed + 1)
    buffer = []                      # (seq, mask, target) kept detached, reused across steps

    for step in range(1, args.steps + 1):
        seq = torch.randn(n, T, C, generator=g)
        mask = torch.rand(n, A, generator=g) > 0.2
        mask[:, 0] = True
        score = seq.sum(dim=(1, 2)).unsqueeze(1) * torch.arange(A).float()
        target = score.masked_fill(~mask, -1e9).argmax(1)
        buffer.append((seq, mask, target))
        batch = buffer[-4:]

        def closure():
            opt.zero_grad()
            loss = sum(F.cross_entropy(policy(s, edge_index, m), t) for s, m, t in batch) / len(batch)
            loss.backward()
            return loss

        loss = opt.step(closure)
        with torch.no_grad():
            for pe, pp in zip(ema.parameters(), policy.parameters()):
                pe.lerp_(pp, 0.1)
        if step % 10 == 0:
            with torch.no_grad():
                acc = (policy(seq, edge_index, mask).argmax(1) == target).float().mean().item()
                acc_ema = (ema(seq, edge_index, mask).argmax(1) == target).float().mean().item()
            print(f"step {step:3d} loss {loss.item():.5f} acc {acc:.4f} ema_acc {acc_ema:.4f}")


if __name__ == "__main__":
    main()
