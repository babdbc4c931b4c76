"""Stateful GRU language model with hand-written truncated BPTT in PyTorch Lightning.
Run: python input.py"""
import math
import warnings

import torch
import lightning.pytorch as pl

from corpus import make_loader, make_stream
from lm_module import StatefulGRULM

warnings.filterwarnings("ignore")


def evaluate(model, stream, bptt=20):
    model.eval()
    with torch.no_grad():
        x, y = stream[:-1].view(1, -1), stream[1:].view(1, -1)
        logits, _ = model(x)
        return torch.nn.functional.cross_entropy(logits[0], y[0]).item()


def main():
    pl.seed_everything(0, verbose=False)
    model = StatefulGRULM()
    trainer = pl.Trainer(
        max_epochs=3,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, train_dataloaders=make_loader())
    for epoch, loss in enumerate(model.epoch_losses):
        print(f"epoch {epoch} train_loss {loss:.4f}")
    held_out = evaluate(model, make_stream(2000, 24, seed=7))
    print(f"held-out loss {held_out:.4f} ppl {math.exp(held_out):.4f}")
    print(f"decoder row norm max {model.decoder.weight.norm(dim=1).max():.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
