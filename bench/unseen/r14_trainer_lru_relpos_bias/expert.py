import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))


def make_repeat_task(n, seq_len, vocab, offset, gen):
    """Token tagging: y[i] = 1 when x[i] == x[i - offset] (positions before `offset` are ignored)."""
    x = torch.randint(0, vocab, (n, seq_len), generator=gen)
    y = torch.full((n, seq_len), -100, dtype=torch.long)
    y[:, offset:] = (x[:, offset:] == x[:, :-offset]).long()
    return x, y


class RelativePositionBias(nn.Module):
    """Learned bias b[h, i - j] added to attention logits (T5 / Swin style)."""

    def __init__(self, max_len, heads):
        super().__init__()
        self.max_len = max_len
        self.table = nn.Parameter(torch.zeros(2 * max_len - 1, heads))
        nn.init.trunc_normal_(self.table, std=0.02)

    def get_bias(self, seq_len):
        pos = torch.arange(seq_len)
        rel = pos.view(1, -1) - pos.view(-1, 1) + self.max_len - 1
        return self.table[rel].permute(2, 0, 1).contiguous()

    def forward(self, seq_len):
        return self.get_bias(seq_len)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.dh = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, bias):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dh) + bias
        attn = scores.softmax(-1)
        return self.out((attn @ v).transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x, bias):
        x = x + self.attn(self.ln1(x), bias)
        return x + self.mlp(self.ln2(x))


class RelPosClassifier(nn.Module):
    def __init__(self, vocab, dim, heads, layers, max_len):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rel_bias = RelativePositionBias(max_len, heads)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, tokens):
        x = self.embed(tokens)
        bias = self.rel_bias(tokens.size(1))
        for blk in self.blocks:
            x = blk(x, bias)
        return self.head(self.norm(x))


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        gen = torch.Generator().manual_seed(cfg["seed"])
        d, m = cfg["data"], cfg["model"]
        x_tr, y_tr = make_repeat_task(d["n_train"], d["seq_len"], d["vocab"], d["offset"], gen)
        x_ev, y_ev = make_repeat_task(d["n_eval"], d["seq_len"], d["vocab"], d["offset"], gen)
        self.train_loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=cfg["train"]["batch_size"],
                                       shuffle=True, generator=gen)
        self.eval_data = (x_ev, y_ev)
        self.model = RelPosClassifier(d["vocab"], m["dim"], m["heads"], m["layers"], m["max_len"])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["optim"]["lr"],
                                           weight_decay=cfg["optim"]["weight_decay"])

    def train_step(self, tokens, labels):
        logits = self.model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        x, y = self.eval_data
        logits = self.model(x)
        self.model.train()
        mask = y != -100
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten()).item()
        return loss, (logits.argmax(-1)[mask] == y[mask]).float().mean().item()

    def fit(self):
        for epoch in range(1, self.cfg["train"]["epochs"] + 1):
            losses = [self.train_step(x, y) for x, y in self.train_loader]
            ev_loss, ev_acc = self.evaluate()
            if epoch % 2 == 0:
                print(f"epoch {epoch} train_loss {sum(losses) / len(losses):.4f} "
                      f"eval_loss {ev_loss:.4f} eval_acc {ev_acc:.4f}")
        table = self.model.rel_bias.table
        off = self.model.rel_bias.max_len - 1
        print(f"rel_bias[-3] {table[off - 3].mean().item():.4f} rel_bias[+3] {table[off + 3].mean().item():.4f} "
              f"table_abs_sum {table.abs().sum().item():.4f}")


def main():
    with open(os.path.join(HERE, "config.json")) as f:
        cfg = json.load(f)
    Trainer(cfg).fit()


if __name__ == "__main__":
    main()
