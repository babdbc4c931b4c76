import argparse

import torch
import torch.nn.functional as F

from .config import MetaConfig
from .data import PrototypeTasks
from .maml import adapt, query_logits
from .model import ConvLearner


def meta_test(model, tasks, cfg):
    # MAML evaluates with batch statistics (transductive BN), so the model stays in train mode.
    params = {k: v.detach() for k, v in model.named_parameters()}
    accs = []
    for _ in range(cfg.test_tasks):
        xs, ys, xq, yq = tasks.sample(cfg.n_way, cfg.k_shot, cfg.k_query)
        fast = adapt(model, params, xs, ys, cfg.inner_steps, cfg.inner_lr)
        with torch.no_grad():
            accs.append((query_logits(model, fast, xq).argmax(1) == yq).float().mean().item())
    return sum(accs) / len(accs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meta-iters", type=int, default=MetaConfig.meta_iters)
    ap.add_argument("--inner-steps", type=int, default=MetaConfig.inner_steps)
    args = ap.parse_args()
    cfg = MetaConfig(meta_iters=args.meta_iters, inner_steps=args.inner_steps)

    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    train_tasks = PrototypeTasks(cfg.num_classes_pool, cfg.image_size, gen)
    test_tasks = PrototypeTasks(cfg.num_classes_pool, cfg.image_size, gen)

    model = ConvLearner(cfg.n_way, cfg.channels, cfg.image_size)
    model.train()
    meta_opt = torch.optim.Adam(model.parameters(), lr=cfg.outer_lr)

    for it in range(1, cfg.meta_iters + 1):
        params = dict(model.named_parameters())
        meta_opt.zero_grad()
        outer_loss, outer_acc = 0.0, 0.0
        for _ in range(cfg.meta_batch):
            xs, ys, xq, yq = train_tasks.sample(cfg.n_way, cfg.k_shot, cfg.k_query)
            fast = adapt(model, params, xs, ys, cfg.inner_steps, cfg.inner_lr)
            logits = query_logits(model, fast, xq)
            loss = F.cross_entropy(logits, yq) / cfg.meta_batch
            loss.backward()
            outer_loss += loss.item()
            outer_acc += (logits.argmax(1) == yq).float().mean().item() / cfg.meta_batch
        meta_opt.step()
        if it % cfg.log_every == 0:
            print(f"iter {it:3d}  meta_loss {outer_loss:.5f}  query_acc {outer_acc:.5f}")

    acc = meta_test(model, test_tasks, cfg)
    norm = torch.sqrt(sum(p.detach().pow(2).sum() for p in model.parameters())).item()
    print(f"final  meta_test_acc {acc:.5f}  param_norm {norm:.5f}")


if __name__ == "__main__":
    main()
