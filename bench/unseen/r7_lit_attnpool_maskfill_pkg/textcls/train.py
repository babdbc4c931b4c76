"""Run from the project root: python -m textcls.train"""
import warnings

import lightning.pytorch as pl

from .data import loaders
from .lit import LitTextClassifier

warnings.filterwarnings("ignore")

MAX_EPOCHS = 4


def main():
    pl.seed_everything(0, verbose=False)
    model = LitTextClassifier()
    train_dl, val_dl = loaders(vocab=model.hparams.vocab, max_len=20, batch_size=32)
    trainer = pl.Trainer(
        max_epochs=MAX_EPOCHS,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, train_dataloaders=train_dl, val_dataloaders=val_dl)
    for epoch, (loss, acc) in enumerate(model.val_history):
        print(f"epoch {epoch} val_loss {loss:.4f} val_acc {acc:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
