"""Distil a small BERT classifier from a bigger one with the Hugging Face Trainer.

Both models are tiny random-init configs (no download); the teacher is frozen by running it
in inference mode inside the distillation wrapper.
"""
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset
from transformers import (BertConfig, BertForSequenceClassification, HfArgumentParser,
                          PrinterCallback, Trainer, TrainerCallback, TrainingArguments)


@dataclass
class KDArguments:
    temperature: float = field(default=2.0)
    alpha: float = field(default=0.7)
    n_train: int = field(default=96)
    seq_len: int = field(default=16)
    vocab_size: int = field(default=64)
    seed: int = field(default=0)


class ToyTextDataset(Dataset):
    """Label = whether token 7 occurs more often than token 11 (padding at the end)."""

    def __init__(self, n, seq_len, vocab, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(2, vocab, (n, seq_len), generator=g)
        lengths = torch.randint(seq_len // 2, seq_len + 1, (n,), generator=g)
        self.mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).long()
        self.ids = self.ids * self.mask
        self.labels = ((self.ids == 7).sum(1) > (self.ids == 11).sum(1)).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": self.mask[i], "labels": self.labels[i]}


class Distiller(nn.Module):
    def __init__(self, student, teacher, temperature, alpha):
        super().__init__()
        self.student = student
        self.teacher = teacher
        self.temperature = temperature
        self.alpha = alpha

    def forward(self, input_ids, attention_mask, labels):
        s_logits = self.student(input_ids=input_ids, attention_mask=attention_mask).logits
        T = self.temperature
        with torch.inference_mode():
            t_logits = self.teacher(input_ids=input_ids, attention_mask=attention_mask).logits
            t_probs = F.softmax(t_logits / T, dim=-1)
        kd = F.kl_div(F.log_softmax(s_logits / T, dim=-1), t_probs, reduction="batchmean") * T * T
        ce = F.cross_entropy(s_logits, labels)
        return {"loss": self.alpha * kd + (1 - self.alpha) * ce, "logits": s_logits}


class PrintLoss(TrainerCallback):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            print(f"step {state.global_step:3d} loss {logs['loss']:.4f}")


def tiny_bert(hidden, layers, vocab, seed):
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                     num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=32,
                     num_labels=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertForSequenceClassification(cfg)


def main():
    parser = HfArgumentParser((KDArguments,))
    (kd_args,) = parser.parse_args_into_dataclasses()
    teacher = tiny_bert(48, 2, kd_args.vocab_size, kd_args.seed + 100).eval()
    student = tiny_bert(24, 1, kd_args.vocab_size, kd_args.seed)
    model = Distiller(student, teacher, kd_args.temperature, kd_args.alpha)
    train_ds = ToyTextDataset(kd_args.n_train, kd_args.seq_len, kd_args.vocab_size, kd_args.seed)

    args = TrainingArguments(output_dir="/tmp/r15_kd_out", per_device_train_batch_size=16,
                             num_train_epochs=4, learning_rate=3e-3, logging_steps=4,
                             save_strategy="no", report_to=[], disable_tqdm=True, use_cpu=True,
                             remove_unused_columns=False, seed=kd_args.seed, dataloader_num_workers=0)
    trainer = Trainer(model=model, args=args, train_dataset=train_ds, callbacks=[PrintLoss()])
    trainer.remove_callback(PrinterCallback)
    trainer.train()

    student.eval()
    with torch.no_grad():
        ds = train_ds
        s = student(input_ids=ds.ids, attention_mask=ds.mask).logits
        t = teacher(input_ids=ds.ids, attention_mask=ds.mask).logits
    agree = (s.argmax(-1) == t.argmax(-1)).float().mean().item()
    print(f"final student_teacher_agreement {agree:.4f} teacher_logit_sum {t.sum().item():.4f} "
          f"student_logit_mean {s.mean().item():.4f}")


if __name__ == "__main__":
    main()
