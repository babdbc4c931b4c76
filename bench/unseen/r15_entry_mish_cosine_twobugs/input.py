"""Train a small Mish-ResNet with a cosine classifier on synthetic 12x12 "glyphs".

    python input.py --steps 40
"""
import argparse

import torch
import torch.nn.functional as F

from netlib import CosineClassifier, SmallResNet


def make_glyphs(n, n_classes, seed):
    g = torch.Generator().manual_seed(seed)
    protos = (torch.rand(n_classes, 1, 12, 12, generator=g) > 0.6).float()
    y = torch.randint(0, n_classes, (n,), generator=g)
    x = protos[y] + 1.2 * torch.randn(n, 1, 12, 12, generator=g)
    return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--classes", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_glyphs(512, args.classes, args.seed)
    xt, yt = make_glyphs(256, args.classes, args.seed)  # same prototypes, fresh noise
    xt, yt = xt[::2], yt[::2]
    backbone, head = SmallResNet(), CosineClassifier(32, args.classes)
    params = list(backbone.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=args.lr)
    g = torch.Generator().manual_seed(args.seed + 1)

    for step in range(1, args.steps + 1):
        idx = torch.randint(0, x.shape[0], (args.batch_size,), generator=g)
        logits = head(backbone(x[idx]))
        loss = F.cross_entropy(logits, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step:3d} loss {loss.item():.4f}")

    backbone.eval()
    with torch.no_grad():
        acc = (head(backbone(xt)).argmax(1) == yt).float().mean().item()
    print(f"final test_acc {acc:.4f} head_norm {head.weight.norm().item():.4f}")


if __name__ == "__main__":
    main()
