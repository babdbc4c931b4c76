"""Cross-batch-memory contrastive classifier trained with transformers.Trainer.
Hyperparameters come from config.json. Run: python input.py"""
import json
import warnings
from pathlib import Path

import torch
from transformers import PrinterCallback, Trainer, TrainingArguments, set_seed
from transformers.utils import logging as hf_logging

from data import TopicDataset
from model import XBMClassifier

warnings.filterwarnings("ignore")
hf_logging.set_verbosity_error()
HERE = Path(__file__).resolve().parent


def main():
    cfg = json.loads((HERE / "config.json").read_text())
    set_seed(cfg["seed"])
    d, m, t = cfg["data"], cfg["model"], cfg["train"]
    train_ds = TopicDataset(d["n_train"], d["seq_len"], d["vocab"], d["n_classes"], seed=1)
    eval_ds = TopicDataset(d["n_eval"], d["seq_len"], d["vocab"], d["n_classes"], seed=2)
    model = XBMClassifier(d["vocab"], d["n_classes"], **m)

    args = TrainingArguments(
        output_dir=t["output_dir"],
        max_steps=t["max_steps"],
        per_device_train_batch_size=t["batch_size"],
        learning_rate=t["learning_rate"],
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=cfg["seed"],
    )
    trainer = Trainer(model=model, args=args, train_dataset=train_ds)
    trainer.remove_callback(PrinterCallback)
    result = trainer.train()
    print(f"train_loss {result.training_loss:.4f}")

    model.eval()
    with torch.no_grad():
        out = model(eval_ds.input_ids, eval_ds.labels)
    acc = (out["logits"].argmax(-1) == eval_ds.labels).float().mean()
    print(f"eval_loss {out['loss'].item():.4f} eval_acc {acc.item():.4f}")
    print(f"memory size {len(model.memory_labels)}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
