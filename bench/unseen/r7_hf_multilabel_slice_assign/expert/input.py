"""Multi-label tagging with a tiny DistilBERT (random init) and a Trainer subclass that
handles partially annotated labels. Run: python input.py"""
import warnings

import torch
from transformers import (DistilBertConfig, DistilBertForSequenceClassification, PrinterCallback,
                          TrainingArguments, set_seed)
from transformers.utils import logging as hf_logging

from data import N_LABELS, MultiLabelTokens
from trainer_ext import PartialLabelTrainer

warnings.filterwarnings("ignore")
hf_logging.set_verbosity_error()


def main():
    set_seed(0)
    config = DistilBertConfig(vocab_size=100, dim=64, n_layers=1, n_heads=2, hidden_dim=128,
                              max_position_embeddings=32, num_labels=N_LABELS,
                              problem_type="multi_label_classification")
    model = DistilBertForSequenceClassification(config)
    train_ds = MultiLabelTokens(640, 8, seed=1)
    test_ds = MultiLabelTokens(256, 8, seed=2, known_frac=1.0)

    args = TrainingArguments(
        output_dir="runs/partial_labels",
        max_steps=120,
        per_device_train_batch_size=32,
        learning_rate=3e-3,
        remove_unused_columns=False,  # keep label_mask for compute_loss
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = PartialLabelTrainer(model=model, args=args, train_dataset=train_ds)
    trainer.remove_callback(PrinterCallback)
    result = trainer.train()
    print(f"train_loss {result.training_loss:.4f}")

    model.eval()
    with torch.no_grad():
        probs = torch.sigmoid(model(input_ids=test_ds.x, attention_mask=torch.ones_like(test_ds.x)).logits)
    pred = (probs > 0.5).float()
    per_label = (pred == test_ds.full_y).float().mean(0)
    print("test acc per label " + " ".join(f"{a:.4f}" for a in per_label.tolist()))
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
