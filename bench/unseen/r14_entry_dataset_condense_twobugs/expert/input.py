import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset

from condense import ConvNet, SyntheticSet, class_gradient, make_blobs, match_loss


def train_and_test(images, labels, x_test, y_test, num_classes, steps, seed):
    torch.manual_seed(seed)
    net = ConvNet(num_classes)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    for _ in range(steps):
        loss = F.cross_entropy(net(images), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return (net(x_test).argmax(-1) == y_test).float().mean().item()


def main():
    p = argparse.ArgumentParser(description="Dataset condensation by gradient matching")
    p.add_argument("--ipc", type=int, default=2)
    p.add_argument("--outer-iters", type=int, default=40)
    p.add_argument("--batch-real", type=int, default=32)
    p.add_argument("--lr-img", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=4)
    args = p.parse_args()

    num_classes = 4
    gen = torch.Generator().manual_seed(args.seed)
    x_train, y_train = make_blobs(400, num_classes, 8, gen)
    x_test, y_test = make_blobs(200, num_classes, 8, gen)
    torch.manual_seed(args.seed)

    init_idx = torch.cat([(y_train == c).nonzero().flatten()[: args.ipc] for c in range(num_classes)])
    syn = SyntheticSet(x_train[init_idx], y_train[init_idx])
    opt_img = torch.optim.SGD([syn.images], lr=args.lr_img, momentum=0.5)
    class_idx = [(y_train == c).nonzero().flatten() for c in range(num_classes)]

    base_acc = train_and_test(syn.images.detach(), syn.labels, x_test, y_test, num_classes, 100, args.seed)
    print(f"init synthetic set: test_acc {base_acc:.4f}")

    for it in range(1, args.outer_iters + 1):
        net = ConvNet(num_classes)
        total = 0.0
        for c in range(num_classes):
            ridx = class_idx[c][torch.randperm(len(class_idx[c]), generator=gen)[: args.batch_real]]
            gw_real = class_gradient(net, x_train[ridx], y_train[ridx])
            loader = DataLoader(Subset(syn, syn.indices_of(c)), batch_size=args.ipc)
            img_syn, lab_syn = next(iter(loader))
            gw_syn = class_gradient(net, img_syn, lab_syn, create_graph=True)
            total = total + match_loss(gw_syn, gw_real)
        opt_img.zero_grad()
        total.backward()
        opt_img.step()
        if it % 10 == 0:
            print(f"iter {it} match_loss {total.item():.4f}")

    acc = train_and_test(syn.images.detach(), syn.labels, x_test, y_test, num_classes, 100, args.seed)
    print(f"condensed synthetic set: test_acc {acc:.4f} image_mean {syn.images.mean().item():.4f} "
          f"image_abs_sum {syn.images.abs().sum().item():.4f}")


if __name__ == "__main__":
    main()
