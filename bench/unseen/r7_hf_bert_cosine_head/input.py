"""Tiny BERT (random init) with a cosine classifier head, trained with transformers.Trainer.
Run: python input.py --num_hidden_layers 2 --max_steps 120"""
import warnings
from dataclasses import dataclass, field

import torch
from transformers import BertConfig, HfArgumentParser, PrinterCallback, Trainer, TrainingArguments, set_seed
from transformers.utils import logging as hf_logging

from data import MotifDataset
from modeling import BertCosineClassifier

warnings.filterwarnings("ignore")
hf_logging.set_verbosity_error()


@dataclass
class ModelArguments:
    hidden_size: int = field(default=32)
    num_hidden_layers: int = field(default=1)
    num_attention_heads: int = field(default=2)
    intermediate_size: int = field(default=64)
    cosine_scale: float = field(default=8.0)


@dataclass
class RunArguments:
    max_steps: int = field(default=20)
    learning_rate: float = field(default=2e-3)
    batch_size: int = field(default=16)
    seq_len: int = field(default=16)


def main():
    model_args, run_args = HfArgumentParser((ModelArguments, RunArguments)).parse_args_into_dataclasses()
    set_seed(0)
    config = BertConfig(vocab_size=100, hidden_size=model_args.hidden_size,
                        num_hidden_layers=model_args.num_hidden_layers,
                        num_attention_heads=model_args.num_attention_heads,
                        intermediate_size=model_args.intermediate_size,
                        max_position_embeddings=32, num_labels=3)
    model = BertCosineClassifier(config, scale=model_args.cosine_scale)
    train_ds = MotifDataset(512, run_args.seq_len, seed=1)
    eval_ds = MotifDataset(192, run_args.seq_len, seed=2)

    args = TrainingArguments(
        output_dir="runs/bert_cosine",
        max_steps=run_args.max_steps,
        per_device_train_batch_size=run_args.batch_size,
        learning_rate=run_args.learning_rate,
        warmup_steps=4,
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = Trainer(model=model, args=args, train_dataset=train_ds)
    trainer.remove_callback(PrinterCallback)  # keep stdout for our own numbers
    result = trainer.train()
    print(f"train_loss {result.training_loss:.4f}")

    model.eval()
    with torch.no_grad():
        out = model(input_ids=eval_ds.x, attention_mask=torch.ones_like(eval_ds.x), labels=eval_ds.y)
    acc = (out.logits.argmax(-1) == eval_ds.y).float().mean()
    print(f"eval_loss {out.loss.item():.4f} eval_acc {acc.item():.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
