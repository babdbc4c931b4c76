"""Order classification with a tiny BERT encoder and a flattened-token head, trained with
transformers.Trainer and a dynamic-padding collator. Run: python input.py"""
import functools
import warnings

from transformers import PrinterCallback, Trainer, TrainingArguments, set_seed
from transformers.utils import logging as hf_logging

from data import VarLenDataset, pad_collate
from model import FlatHeadClassifier

warnings.filterwarnings("ignore")
hf_logging.set_verbosity_error()

MAX_LEN = 12


def main():
    set_seed(0)
    model = FlatHeadClassifier(MAX_LEN)
    train_ds = VarLenDataset(512, 6, MAX_LEN, seed=1)
    args = TrainingArguments(
        output_dir="runs/flat_head",
        max_steps=48,
        per_device_train_batch_size=16,
        learning_rate=2e-3,
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = Trainer(model=model, args=args, train_dataset=train_ds, data_collator=functools.partial(pad_collate, pad_to=MAX_LEN))
    trainer.remove_callback(PrinterCallback)
    result = trainer.train()
    print(f"train_loss {result.training_loss:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
