import math

import torch

from .config import parse_args
from .data import make_stream, segments
from .model import CharGRU
from .step import make_train_step


def main(argv=None):
    cfg = parse_args(argv)
    torch.manual_seed(cfg.seed)
    stream = make_stream(cfg)
    model = CharGRU(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    step = make_train_step(model, opt, cfg)
    n = 0
    for epoch in range(cfg.epochs):
        total, count = 0.0, 0
        for x, y in segments(stream, cfg.bptt):
            loss = step(x, y)
            total += loss
            count += 1
            n += 1
            if n % cfg.log_every == 0:
                print(f"epoch {epoch} seg {n:3d} loss {loss:.5f}")
        print(f"epoch {epoch} mean loss {total / count:.5f} ppl {math.exp(total / count):.4f}")
    with torch.no_grad():
        norm = sum(p.norm() ** 2 for p in model.parameters()).sqrt().item()
    print(f"param norm {norm:.5f}")


if __name__ == "__main__":
    main()
