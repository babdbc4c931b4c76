"""Fine-tune a tiny, randomly initialised BERT (no download) for sequence
classification with two added marker tokens and a "last-two-layers mean
pooling" head (a common Kaggle/sentence-embedding recipe).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel

BASE_VOCAB = 40
PAD, CLS, SEP = 0, 1, 2
NEW_TOKENS = ["[E1]", "[E2]"]


class LayerPoolClassifier(nn.Module):
    def __init__(self, config, n_labels, n_pool_layers=2):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.n_pool_layers = n_pool_layers
        self.head = nn.Linear(n_pool_layers * config.hidden_size, n_labels)

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        mask = attention_mask.unsqueeze(-1).to(out.last_hidden_state.dtype)
        pooled = []
        for hidden in out.hidden_states[-self.n_pool_layers:]:
            hidden.masked_fill_(mask == 0, 0.0)
            pooled.append(hidden.sum(1) / mask.sum(1).clamp(min=1.0))
        return self.head(torch.cat(pooled, dim=-1))


def add_marker_tokens(model, n_new):
    """Grow the vocabulary and initialise the new rows with the mean embedding."""
    model.bert.resize_token_embeddings(BASE_VOCAB + n_new, mean_resizing=False)
    emb = model.bert.get_input_embeddings()
    emb.weight[-n_new:] = emb.weight[:-n_new].mean(dim=0, keepdim=True)
    return [BASE_VOCAB + i for i in range(n_new)]


def make_batch(n, max_len, marker_ids, gen):
    """Label = 1 if the span between [E1] ... [E2] contains more 'odd' tokens than 'even' ones."""
    ids = torch.full((n, max_len), PAD, dtype=torch.long)
    mask = torch.zeros(n, max_len, dtype=torch.long)
    labels = torch.zeros(n, dtype=torch.long)
    for i in range(n):
        length = int(torch.randint(max_len // 2, max_len + 1, (1,), generator=gen))
        body = torch.randint(3, BASE_VOCAB, (length - 2,), generator=gen)
        a = int(torch.randint(0, (length - 2) // 2, (1,), generator=gen))
        b = int(torch.randint(a + 2, length - 2, (1,), generator=gen))
        span = body[a + 1:b]
        labels[i] = int((span % 2 == 1).sum() > (span % 2 == 0).sum())
        body[a], body[b] = marker_ids[0], marker_ids[1]
        ids[i, :length] = torch.cat([torch.tensor([CLS]), body, torch.tensor([SEP])])
        mask[i, :length] = 1
    return ids, mask, labels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--max-len", type=int, default=14)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    config = BertConfig(vocab_size=BASE_VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    model = LayerPoolClassifier(config, n_labels=2)
    marker_ids = add_marker_tokens(model, len(NEW_TOKENS))

    gen = torch.Generator().manual_seed(args.seed + 1)
    val = make_batch(64, args.max_len, marker_ids, gen)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    losses = []
    model.train()
    for step in range(args.steps):
        ids, mask, labels = make_batch(args.batch, args.max_len, marker_ids, gen)
        logits = model(ids, mask)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        v_logits = model(val[0], val[1])
        v_loss = F.cross_entropy(v_logits, val[2]).item()
        v_acc = (v_logits.argmax(1) == val[2]).float().mean().item()
    emb = model.bert.get_input_embeddings().weight
    checksum = sum(p.double().abs().sum().item() for p in model.parameters())
    print(f"first_loss {losses[0]:.6f}")
    print(f"final_loss {losses[-1]:.6f}")
    print(f"val_loss {v_loss:.6f} val_acc {v_acc:.4f}")
    print(f"new_token_rows_sum {emb[-len(NEW_TOKENS):].double().sum().item():.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
