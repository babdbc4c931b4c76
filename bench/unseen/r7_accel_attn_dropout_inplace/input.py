"""Tiny transformer encoder on an order-detection task, trained with accelerate
(gradient accumulation over 2 micro-batches). Run: python input.py"""
import warnings

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader

from data import order_task
from encoder import TinyEncoderClassifier

warnings.filterwarnings("ignore")

VOCAB, LEN, EPOCHS = 20, 12, 8


def main():
    set_seed(0)
    accelerator = Accelerator(cpu=True, gradient_accumulation_steps=2)
    model = TinyEncoderClassifier(VOCAB, LEN)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    train_dl = DataLoader(order_task(1024, LEN, VOCAB, seed=1), batch_size=16, shuffle=True)
    val_ids, val_y = order_task(512, LEN, VOCAB, seed=2).tensors
    model, optimizer, train_dl = accelerator.prepare(model, optimizer, train_dl)

    for epoch in range(EPOCHS):
        model.train()
        total = 0.0
        for ids, y in train_dl:
            with accelerator.accumulate(model):
                loss = F.cross_entropy(model(ids), y)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            total += loss.item()
        model.eval()
        with torch.no_grad():
            acc = (model(val_ids).argmax(1) == val_y).float().mean().item()
        print(f"epoch {epoch} train_loss {total / len(train_dl):.4f} val_acc {acc:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
