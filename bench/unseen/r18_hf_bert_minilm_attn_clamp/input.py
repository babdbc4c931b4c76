"""MiniLM-style distillation of a BERT classifier into a smaller BERT.

The student (fewer hidden units, same number of heads) is trained on the
hard labels, the teacher's softened logits and the KL divergence between the
teacher's and the student's last-layer self-attention distributions
(Wang et al., 2020, "MiniLM").  Both models are tiny, randomly initialised
configs; the teacher is frozen.
"""
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from transformers import (BertConfig, BertForSequenceClassification, HfArgumentParser,
                          get_linear_schedule_with_warmup)
from transformers.utils import logging as hf_logging

hf_logging.set_verbosity_error()


@dataclass
class DistillArguments:
    seed: int = field(default=0)
    vocab_size: int = field(default=64)
    max_len: int = field(default=24)
    n_train: int = field(default=384)
    batch_size: int = field(default=32)
    epochs: int = field(default=3)
    lr: float = field(default=3e-4)
    warmup_ratio: float = field(default=0.1)
    temperature: float = field(default=2.0)
    alpha_ce: float = field(default=0.5)
    alpha_logit_kd: float = field(default=0.5)
    alpha_attn_kd: float = field(default=1.0)


def make_batch_data(args, g):
    """Token sequences of random length; label = more 5s than 6s."""
    lens = torch.randint(8, args.max_len + 1, (args.n_train,), generator=g)
    ids = torch.randint(4, args.vocab_size, (args.n_train, args.max_len), generator=g)
    ids[:, 0] = 2  # [CLS]
    mask = (torch.arange(args.max_len)[None] < lens[:, None]).long()
    ids = ids * mask                      # 0 = [PAD]
    labels = ((ids == 5).sum(1) > (ids == 6).sum(1)).long()
    return ids, mask, labels


def build_models(args):
    common = dict(vocab_size=args.vocab_size, max_position_embeddings=args.max_len, num_labels=2,
                  num_attention_heads=4, attn_implementation="eager")
    teacher_cfg = BertConfig(hidden_size=64, num_hidden_layers=3, intermediate_size=128, **common)
    student_cfg = BertConfig(hidden_size=32, num_hidden_layers=2, intermediate_size=64,
                             attention_probs_dropout_prob=0.0, **common)
    teacher = BertForSequenceClassification(teacher_cfg)
    student = BertForSequenceClassification(student_cfg)
    return teacher, student


def finetune_teacher(teacher, data, args, g, epochs=2):
    ids, mask, labels = data
    opt = torch.optim.AdamW(teacher.parameters(), lr=1e-3)
    teacher.train()
    for _ in range(epochs):
        perm = torch.randperm(args.n_train, generator=g)
        for i in range(0, args.n_train, args.batch_size):
            idx = perm[i:i + args.batch_size]
            out = teacher(input_ids=ids[idx], attention_mask=mask[idx], labels=labels[idx])
            opt.zero_grad()
            out.loss.backward()
            opt.step()
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        acc = (teacher(input_ids=ids, attention_mask=mask).logits.argmax(-1) == labels).float().mean()
    print(f"teacher train_acc {acc:.5f}")


def attention_kd_loss(student_attn, teacher_attn, mask):
    """KL(teacher || student) over keys, averaged over heads and valid queries."""
    s = student_attn.clamp_(min=1e-8)
    t = teacher_attn.clamp(min=1e-8)
    kl = (teacher_attn * (t.log() - s.log())).sum(-1)          # (B, H, Lq)
    valid = mask[:, None, :].float()
    return (kl * valid).sum() / (valid.sum() * kl.shape[1])


def distill_step(student, teacher, batch, args):
    ids, mask, labels = batch
    with torch.no_grad():
        t_out = teacher(input_ids=ids, attention_mask=mask, output_attentions=True)
    s_out = student(input_ids=ids, attention_mask=mask, output_attentions=True)
    ce = F.cross_entropy(s_out.logits, labels)
    T = args.temperature
    logit_kd = F.kl_div(F.log_softmax(s_out.logits / T, -1), F.softmax(t_out.logits / T, -1),
                        reduction="batchmean") * T * T
    attn_kd = attention_kd_loss(s_out.attentions[-1], t_out.attentions[-1], mask)
    loss = args.alpha_ce * ce + args.alpha_logit_kd * logit_kd + args.alpha_attn_kd * attn_kd
    return loss, ce, logit_kd, attn_kd, s_out.logits


def main():
    (args,) = HfArgumentParser(DistillArguments).parse_args_into_dataclasses()
    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    ids, mask, labels = make_batch_data(args, g)
    teacher, student = build_models(args)
    finetune_teacher(teacher, (ids, mask, labels), args, g)
    opt = torch.optim.AdamW(student.parameters(), lr=args.lr, weight_decay=0.01)
    steps = args.epochs * ((args.n_train + args.batch_size - 1) // args.batch_size)
    sched = get_linear_schedule_with_warmup(opt, int(args.warmup_ratio * steps), steps)

    for epoch in range(args.epochs):
        student.train()
        perm = torch.randperm(args.n_train, generator=g)
        sums, correct = torch.zeros(4), 0
        for i in range(0, args.n_train, args.batch_size):
            idx = perm[i:i + args.batch_size]
            loss, ce, lkd, akd, logits = distill_step(student, teacher, (ids[idx], mask[idx], labels[idx]), args)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            opt.step()
            sched.step()
            sums += torch.tensor([loss.item(), ce.item(), lkd.item(), akd.item()]) * len(idx)
            correct += (logits.argmax(-1) == labels[idx]).sum().item()
        sums /= args.n_train
        print(f"epoch {epoch} loss {sums[0]:.5f} ce {sums[1]:.5f} logit_kd {sums[2]:.5f} "
              f"attn_kd {sums[3]:.5f} train_acc {correct / args.n_train:.5f}")

    student.eval()
    with torch.no_grad():
        s_attn = student(input_ids=ids[:64], attention_mask=mask[:64], output_attentions=True).attentions[-1]
        t_attn = teacher(input_ids=ids[:64], attention_mask=mask[:64], output_attentions=True).attentions[-1]
        final_kd = attention_kd_loss(s_attn, t_attn, mask[:64]).item()
    qw = student.bert.encoder.layer[-1].attention.self.query.weight
    print(f"final eval attn_kd {final_kd:.5f} |W_q last| {qw.norm():.5f}")


if __name__ == "__main__":
    main()
