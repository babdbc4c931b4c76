"""Entity-span extraction with a tiny randomly initialised BERT.

The span to extract is wrapped in two new marker tokens ([E] ... [/E]) that are added to the
vocabulary; their embeddings start at the mean of the existing embeddings.
"""
import warnings
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel, HfArgumentParser, get_linear_schedule_with_warmup
from transformers.models.bert.modeling_bert import BertPreTrainedModel
from transformers.utils import logging as hf_logging

warnings.filterwarnings("ignore")
hf_logging.set_verbosity_error()


@dataclass
class TrainArgs:
    epochs: int = 4
    batch_size: int = 32
    lr: float = 3e-3
    warmup_ratio: float = 0.1
    seq_len: int = 24
    n_train: int = 512
    n_val: int = 128
    hidden_size: int = 32
    layers: int = 2
    seed: int = 0


class BertForSpanExtraction(BertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.bert = BertModel(config, add_pooling_layer=False)
        self.span_head = nn.Linear(config.hidden_size, 2)
        self.post_init()

    def forward(self, input_ids, attention_mask, start_positions=None, end_positions=None):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        logits = self.span_head(hidden)
        start_logits, end_logits = logits.split(1, dim=-1)
        start_logits.squeeze_(-1)
        end_logits.squeeze_(-1)
        if start_positions is None:
            return start_logits, end_logits
        loss = (F.cross_entropy(start_logits, start_positions) + F.cross_entropy(end_logits, end_positions)) / 2
        return loss, start_logits, end_logits


def add_marker_tokens(model, n_new):
    old = model.config.vocab_size
    model.resize_token_embeddings(old + n_new, mean_resizing=False)
    emb = model.get_input_embeddings().weight
    emb[old:] = emb[:old].mean(dim=0, keepdim=True)
    return old, old + 1   # ids of [E] and [/E]


def make_split(n, seq_len, base_vocab, e_open, e_close, gen):
    ids = torch.randint(5, base_vocab, (n, seq_len), generator=gen)
    starts = torch.randint(2, seq_len - 8, (n,), generator=gen)
    lengths = torch.randint(1, 5, (n,), generator=gen)
    ends = starts + lengths - 1
    rows = torch.arange(n)
    ids[rows, starts - 1] = e_open
    ids[rows, ends + 1] = e_close
    ids[:, 0] = 2   # [CLS]
    mask = torch.ones_like(ids)
    return ids, mask, starts - 1, ends + 1   # the span includes its markers


def main():
    (args,) = HfArgumentParser(TrainArgs).parse_args_into_dataclasses()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    config = BertConfig(vocab_size=64, hidden_size=args.hidden_size, num_hidden_layers=args.layers,
                        num_attention_heads=4, intermediate_size=4 * args.hidden_size,
                        max_position_embeddings=64, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    model = BertForSpanExtraction(config)
    base_vocab = config.vocab_size
    e_open, e_close = add_marker_tokens(model, 2)

    gen = torch.Generator().manual_seed(args.seed)
    train = make_split(args.n_train, args.seq_len, base_vocab, e_open, e_close, gen)
    val = make_split(args.n_val, args.seq_len, base_vocab, e_open, e_close, gen)

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps_per_epoch = args.n_train // args.batch_size
    total = steps_per_epoch * args.epochs
    sched = get_linear_schedule_with_warmup(opt, int(args.warmup_ratio * total), total)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(args.n_train, generator=gen)
        for b in range(steps_per_epoch):
            idx = perm[b * args.batch_size:(b + 1) * args.batch_size]
            loss, _, _ = model(train[0][idx], train[1][idx], train[2][idx], train[3][idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            if step % 16 == 0:
                print(f"step {step:3d} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.6f}")
            step += 1
        model.eval()
        with torch.no_grad():
            s_log, e_log = model(val[0], val[1])
            exact = ((s_log.argmax(1) == val[2]) & (e_log.argmax(1) == val[3])).float().mean().item()
        print(f"epoch {epoch} val exact_match {exact:.4f}")
    emb = model.get_input_embeddings().weight
    print(f"marker embedding norms {emb[e_open].norm().item():.5f} {emb[e_close].norm().item():.5f}")


if __name__ == "__main__":
    main()
