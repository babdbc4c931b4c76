"""python -m fastattn.train [--steps N]"""
import torch
import torch.nn.functional as F

from .config import parse_config
from .data import majority_task
from .model import OrderClassifier


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg.seed)
    x_tr, y_tr = majority_task(1024, cfg.seq_len, cfg.vocab, gen)
    x_va, y_va = majority_task(256, cfg.seq_len, cfg.vocab, gen)

    model = OrderClassifier(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    print(f"params {sum(p.numel() for p in model.parameters())}")
    for step in range(1, cfg.steps + 1):
        model.train()
        idx = torch.randint(0, x_tr.size(0), (cfg.batch_size,), generator=gen)
        logits, z = model(x_tr[idx])
        ce = F.cross_entropy(logits, y_tr[idx])
        loss = ce + cfg.z_loss * z
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % cfg.log_every == 0:
            model.eval()
            with torch.no_grad():
                acc = (model(x_va)[0].argmax(1) == y_va).float().mean().item()
            print(f"step {step:4d} ce {ce.item():.5f} z {z.item():.4f} val_acc {acc:.4f}")
    print(f"head norm {model.head.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
