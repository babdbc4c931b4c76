"""Joint keyword tagging + sentence classification on a tiny, randomly initialised BERT.

Ported from an older multi-task script that backpropagates all task losses in one call with
per-task weights passed as grad_tensors.
"""
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel, HfArgumentParser, get_linear_schedule_with_warmup


@dataclass
class TrainArgs:
    epochs: int = field(default=3)
    batch_size: int = field(default=32)
    lr: float = field(default=3e-3)
    warmup_steps: int = field(default=5)
    tag_weight: float = field(default=1.0, metadata={"help": "weight of the token-tagging loss"})
    cls_weight: float = field(default=0.3, metadata={"help": "weight of the sentence loss"})
    seed: int = field(default=0)


VOCAB, PAD, CLS, SEP = 40, 0, 1, 2
KEYWORDS = torch.arange(30, 40)     # token ids that must be tagged
TRIGGERS = torch.arange(20, 23)     # token ids that make a sentence positive


def make_corpus(n, gen, max_len=20):
    ids = torch.full((n, max_len), PAD, dtype=torch.long)
    mask = torch.zeros(n, max_len, dtype=torch.long)
    tags = torch.full((n, max_len), -100, dtype=torch.long)
    for i in range(n):
        length = int(torch.randint(6, max_len - 2, (1,), generator=gen))
        body = torch.randint(3, VOCAB, (length,), generator=gen)
        seq = torch.cat([torch.tensor([CLS]), body, torch.tensor([SEP])])
        ids[i, :seq.numel()] = seq
        mask[i, :seq.numel()] = 1
        tags[i, 1:length + 1] = torch.isin(body, KEYWORDS).long()
    sent = torch.isin(ids, TRIGGERS).any(1).long()   # sentence label: mentions a trigger token
    return ids, mask, tags, sent


class MultiTaskBert(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.tagger = nn.Linear(config.hidden_size, 2)
        self.classifier = nn.Linear(config.hidden_size, 2)

    def forward(self, input_ids, attention_mask):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1)                 # masked mean pooling
        return self.tagger(hidden), self.classifier(pooled)


def main():
    (args,) = HfArgumentParser(TrainArgs).parse_args_into_dataclasses()
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, pad_token_id=PAD)
    model = MultiTaskBert(config)
    ids, mask, tags, sent = make_corpus(384, gen)
    v_ids, v_mask, v_tags, v_sent = make_corpus(128, gen)

    steps_per_epoch = (ids.size(0) + args.batch_size - 1) // args.batch_size
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, args.epochs * steps_per_epoch)

    for epoch in range(1, args.epochs + 1):
        model.train()
        perm = torch.randperm(ids.size(0), generator=gen)
        sums = [0.0, 0.0]
        for b in range(steps_per_epoch):
            idx = perm[b * args.batch_size:(b + 1) * args.batch_size]
            tag_logits, cls_logits = model(ids[idx], mask[idx])
            loss_tag = F.cross_entropy(tag_logits.reshape(-1, 2), tags[idx].reshape(-1), ignore_index=-100)
            loss_cls = F.cross_entropy(cls_logits, sent[idx])

            optimizer.zero_grad()
            torch.autograd.backward([loss_tag, loss_cls],
                                    [torch.tensor(args.tag_weight), torch.tensor(args.cls_weight)])
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            sums[0] += loss_tag.item()
            sums[1] += loss_cls.item()

        model.eval()
        with torch.no_grad():
            t_logits, c_logits = model(v_ids, v_mask)
            valid = v_tags != -100
            tag_acc = (t_logits.argmax(-1)[valid] == v_tags[valid]).float().mean().item()
            cls_acc = (c_logits.argmax(-1) == v_sent).float().mean().item()
        print(f"epoch {epoch}  loss_tag {sums[0] / steps_per_epoch:.5f}  loss_cls {sums[1] / steps_per_epoch:.5f}  "
              f"tag_acc {tag_acc:.5f}  cls_acc {cls_acc:.5f}")

    emb = model.bert.embeddings.word_embeddings.weight.norm().item()
    print(f"final  word_emb_norm {emb:.5f}  classifier_norm {model.classifier.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
