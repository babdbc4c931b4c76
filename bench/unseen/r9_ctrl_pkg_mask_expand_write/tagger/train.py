"""python -m tagger.train [--epochs N] [--no-causal]"""
import argparse
from dataclasses import fields

import torch
import torch.nn.functional as F

from .config import TaggerConfig
from .data import iterate, make_corpus
from .model import Tagger


def parse_config():
    parser = argparse.ArgumentParser()
    for f in fields(TaggerConfig):
        if f.type is bool or isinstance(f.default, bool):
            parser.add_argument(f"--no-{f.name}", dest=f.name, action="store_false")
        else:
            parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return TaggerConfig(**vars(parser.parse_args()))


@torch.no_grad()
def evaluate(model, tokens, tags, batch_size):
    model.eval()
    correct = total = 0
    loss = 0.0
    for tok, tag in iterate(tokens, tags, batch_size):
        logits = model(tok)
        loss += F.cross_entropy(logits.flatten(0, 1), tag.flatten(), reduction="sum").item()
        valid = tag != -100
        correct += (logits.argmax(-1)[valid] == tag[valid]).sum().item()
        total += valid.sum().item()
    return loss / total, correct / total


def main():
    cfg = parse_config()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(cfg.seed)
    train = make_corpus(cfg.n_train, cfg, gen)
    val = make_corpus(cfg.n_val, cfg, gen)
    model = Tagger(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        model.train()
        for tok, tag in iterate(*train, cfg.batch_size, gen):
            logits = model(tok)
            loss = F.cross_entropy(logits.flatten(0, 1), tag.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
        vl, va = evaluate(model, *val, cfg.batch_size)
        print(f"epoch {epoch} train_loss {loss.item():.5f} val_loss {vl:.5f} val_acc {va:.4f}")


if __name__ == "__main__":
    main()
