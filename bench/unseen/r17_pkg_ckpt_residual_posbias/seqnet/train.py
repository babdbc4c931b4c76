import torch
import torch.nn.functional as F

from .config import Config
from .model import SeqClassifier


def make_batch(cfg, gen):
    tokens = torch.randint(0, cfg.vocab, (cfg.batch_size, cfg.seq_len), generator=gen)
    # label: does token 3 appear in the first half more often than in the second half?
    first = (tokens[:, : cfg.seq_len // 2] == 3).sum(1)
    second = (tokens[:, cfg.seq_len // 2:] == 3).sum(1)
    return tokens, (first > second).long()


def main(cfg=Config()):
    torch.manual_seed(cfg.seed)
    model = SeqClassifier(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    val_tokens, val_y = make_batch(Config(batch_size=256), torch.Generator().manual_seed(99))
    for step in range(1, cfg.steps + 1):
        model.train()
        tokens, y = make_batch(cfg, gen)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.bf16):
            logits = model(tokens)
        loss = F.cross_entropy(logits.float(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % cfg.log_every == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.bf16):
                acc = (model(val_tokens).argmax(1) == val_y).float().mean().item()
            print(f"step {step} loss {loss.item():.5f} val_acc {acc:.5f}")


if __name__ == "__main__":
    main()
