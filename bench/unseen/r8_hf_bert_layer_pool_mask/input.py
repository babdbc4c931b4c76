"""Sequence classification with a tiny randomly initialised BERT (no download): masked mean
pooling over the last two hidden layers. Run: python input.py [--epochs 4 --lr 1e-3 ...]"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel

PAD, A, B = 0, 5, 6


def make_data(n, max_len, vocab, seed):
    """Label 1 if token A occurs more often than token B in the (unpadded) sequence."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(8, max_len + 1, (n,), generator=g)
    ids = torch.randint(7, vocab, (n, max_len), generator=g)
    pick = torch.rand(n, max_len, generator=g)
    ids = torch.where(pick < 0.15, torch.full_like(ids, A), ids)
    ids = torch.where((pick >= 0.15) & (pick < 0.3), torch.full_like(ids, B), ids)
    mask = torch.arange(max_len)[None, :] < lengths[:, None]
    ids = torch.where(mask, ids, torch.full_like(ids, PAD))
    labels = (((ids == A) & mask).sum(1) > ((ids == B) & mask).sum(1)).long()
    return ids, mask.long(), labels


class LayerPoolClassifier(nn.Module):
    def __init__(self, config, n_layers_pooled=2):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.k = n_layers_pooled
        self.head = nn.Linear(config.hidden_size, 2)

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        mask = attention_mask.unsqueeze(-1).bool()
        layers = out.hidden_states[-self.k:]
        for h in layers:
            h.masked_fill_(~mask, 0.0)                 # padding tokens must not count
        pooled = torch.stack([h.sum(1) for h in layers]).mean(0) / mask.sum(1)
        return self.head(pooled)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--max-len", type=int, default=24)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, pad_token_id=PAD)
    model = LayerPoolClassifier(config)
    train = make_data(768, args.max_len, config.vocab_size, seed=1)
    val = make_data(256, args.max_len, config.vocab_size, seed=2)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(train[0]))
        total = 0.0
        for idx in perm.split(args.batch_size):
            logits = model(train[0][idx], train[1][idx])
            loss = F.cross_entropy(logits, train[2][idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        model.eval()
        with torch.no_grad():
            acc = (model(val[0], val[1]).argmax(1) == val[2]).float().mean().item()
        print(f"epoch {epoch} loss {total / len(train[0]):.5f} val_acc {acc:.4f}")
    print(f"checksum {sum(p.abs().sum() for p in model.parameters()).item():.4f}")


if __name__ == "__main__":
    main()
