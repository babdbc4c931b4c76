"""Deep Mutual Learning (Zhang et al. 2018) for two tiny BERT classifiers with transformers.Trainer.

Each peer is trained with cross-entropy plus a KL "mimicry" term towards the other peer's
(fixed) prediction; both peers are updated by the same optimiser step.
"""
import tempfile
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset
from transformers import (BertConfig, BertForSequenceClassification, HfArgumentParser, PrinterCallback,
                          Trainer, TrainerCallback, TrainingArguments)


@dataclass
class DMLArguments:
    temperature: float = field(default=2.0)
    mimicry_weight: float = field(default=1.0)
    n_train: int = field(default=512)
    seq_len: int = field(default=16)


class CountDataset(Dataset):
    """label = 1 if token 5 occurs more often than token 6 in the sequence."""

    def __init__(self, n, seq_len, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(4, 12, (n, seq_len), generator=g)
        self.ids[:, 0] = 2  # [CLS]
        self.labels = ((self.ids == 5).sum(1) > (self.ids == 6).sum(1)).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


class PeerPair(nn.Module):
    def __init__(self, seed):
        super().__init__()
        cfg = BertConfig(vocab_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=32, num_labels=2,
                         hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        torch.manual_seed(seed)
        self.peer1 = BertForSequenceClassification(cfg)
        torch.manual_seed(seed + 1)
        self.peer2 = BertForSequenceClassification(cfg)


class MutualTrainer(Trainer):
    def __init__(self, *args, dml_args=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.dml = dml_args
        self.epoch_stats = []

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs["labels"]
        logits1 = model.peer1(input_ids=inputs["input_ids"]).logits
        logits2 = model.peer2(input_ids=inputs["input_ids"]).logits
        T = self.dml.temperature

        # each peer mimics the other one's prediction, which is a fixed target for it
        target1 = logits2
        target1.requires_grad = False
        target2 = logits1
        target2.requires_grad = False

        kl1 = F.kl_div(F.log_softmax(logits1 / T, -1), F.softmax(target1 / T, -1), reduction="batchmean") * T * T
        kl2 = F.kl_div(F.log_softmax(logits2 / T, -1), F.softmax(target2 / T, -1), reduction="batchmean") * T * T
        ce1 = F.cross_entropy(logits1, labels)
        ce2 = F.cross_entropy(logits2, labels)
        loss = ce1 + ce2 + self.dml.mimicry_weight * (kl1 + kl2)
        self.epoch_stats.append((ce1.item(), ce2.item(), kl1.item() + kl2.item()))
        return loss


class EpochPrinter(TrainerCallback):
    def __init__(self):
        self.trainer = None

    def on_epoch_end(self, args, state, control, **kwargs):
        s = self.trainer.epoch_stats
        n = len(s)
        print(f"epoch {round(state.epoch)} ce1 {sum(x[0] for x in s) / n:.5f} ce2 {sum(x[1] for x in s) / n:.5f} "
              f"kl {sum(x[2] for x in s) / n:.5f}")
        s.clear()


def main():
    parser = HfArgumentParser((DMLArguments,))
    (dml_args,) = parser.parse_args_into_dataclasses()
    train_ds = CountDataset(dml_args.n_train, dml_args.seq_len, seed=0)
    val_ds = CountDataset(256, dml_args.seq_len, seed=1)
    model = PeerPair(seed=0)

    with tempfile.TemporaryDirectory() as out_dir:
        args = TrainingArguments(output_dir=out_dir, num_train_epochs=6, per_device_train_batch_size=32,
                                 learning_rate=3e-3, weight_decay=0.0, warmup_steps=0, lr_scheduler_type="linear",
                                 logging_strategy="no", save_strategy="no", report_to=[], use_cpu=True,
                                 disable_tqdm=True, seed=0, dataloader_num_workers=0,
                                 remove_unused_columns=False)
        printer = EpochPrinter()
        trainer = MutualTrainer(model=model, args=args, train_dataset=train_ds, dml_args=dml_args,
                                callbacks=[printer])
        printer.trainer = trainer
        trainer.remove_callback(PrinterCallback)   # keep stdout to our own per-epoch lines
        trainer.train()

    model.eval()
    with torch.no_grad():
        for name in ("peer1", "peer2"):
            logits = getattr(model, name)(input_ids=val_ds.ids).logits
            acc = (logits.argmax(-1) == val_ds.labels).float().mean().item()
            print(f"{name} val acc {acc:.4f} val ce {F.cross_entropy(logits, val_ds.labels).item():.5f}")
        checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print(f"param checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
