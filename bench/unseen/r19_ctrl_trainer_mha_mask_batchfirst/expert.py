"""Next-token prediction on synthetic arithmetic sequences with a one-block causal transformer.

Trainer class; hyperparameters in config.json next to this file.
"""
import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_sequences(n, length, vocab, gen):
    start = torch.randint(0, vocab, (n, 1), generator=gen)
    step = torch.randint(1, 4, (n, 1), generator=gen)
    return (start + step * torch.arange(length + 1)) % vocab


class TinyCausalLM(nn.Module):
    def __init__(self, vocab, d_model, n_heads, max_len):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(max_len, d_model))
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0)
        self.ln1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.ln2 = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab)
        nn.init.normal_(self.pos, std=0.02)

    def forward(self, ids):
        b, length = ids.shape
        x = self.embed(ids)                       # [B, L, D]
        x += self.pos[:length]                    # in place on the embedding output
        causal = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        x = x + a
        x = x + self.ff(self.ln2(x))
        return self.out(x)


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        self.gen = torch.Generator().manual_seed(cfg["seed"])
        self.data = make_sequences(cfg["n_sequences"], cfg["seq_len"], cfg["vocab_size"], self.gen)
        self.model = TinyCausalLM(cfg["vocab_size"], cfg["d_model"], cfg["n_heads"], cfg["seq_len"])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["lr"])
        self.history = []

    def train_step(self, batch):
        inputs, targets = batch[:, :-1], batch[:, 1:]
        logits = self.model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                               label_smoothing=self.cfg["label_smoothing"])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self):
        bs = self.cfg["batch_size"]
        for epoch in range(1, self.cfg["epochs"] + 1):
            perm = torch.randperm(self.data.size(0), generator=self.gen)
            losses = [self.train_step(self.data[perm[i:i + bs]]) for i in range(0, self.data.size(0), bs)]
            self.history.append(sum(losses) / len(losses))
            with torch.no_grad():
                logits = self.model(self.data[:64, :-1])
                acc = (logits.argmax(-1) == self.data[:64, 1:]).float().mean().item()
            print(f"epoch {epoch}  loss {self.history[-1]:.5f}  next_token_acc {acc:.5f}")
        print(f"final  pos_norm {self.model.pos.norm().item():.5f}")


if __name__ == "__main__":
    Trainer(json.loads(Path(__file__).with_name("config.json").read_text())).fit()
