"""Order-sensitive sequence classification with a rotary-attention encoder (Lightning).

Label = 1 if the first marker token A appears before the first marker token B. Baseline
validation runs before training (trainer.validate), then trainer.fit.
"""
import argparse
from pathlib import Path

import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader, TensorDataset

TOK_A, TOK_B = 1, 2


class RotaryEmbedding(nn.Module):
    """cos/sin tables cached lazily and grown when a longer sequence arrives."""

    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None

    def _update_cache(self, seqlen):
        if seqlen > self._seq_len_cached:
            self._seq_len_cached = seqlen
            t = torch.arange(seqlen, dtype=self.inv_freq.dtype)
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat([freqs, freqs], dim=-1)
            self._cos_cached = emb.cos()
            self._sin_cached = emb.sin()

    @staticmethod
    def rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([-x2, x1], dim=-1)

    def forward(self, q, k):
        seqlen = q.shape[-2]
        self._update_cache(seqlen)
        cos, sin = self._cos_cached[:seqlen], self._sin_cached[:seqlen]
        q = q * cos + self.rotate_half(q) * sin
        k = k * cos + self.rotate_half(k) * sin
        return q, k


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.rotary = RotaryEmbedding(dim // heads)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k = self.rotary(q, k)
        att = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(att.transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.norm2(x))


class OrderClassifier(pl.LightningModule):
    def __init__(self, vocab_size, dim, heads, layers, lr):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 2)
        self.train_losses = []

    def forward(self, tokens):
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(dim=1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.train_losses.append(loss.item())
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y), prog_bar=False)
        self.log("val_acc", (logits.argmax(-1) == y).float().mean(), prog_bar=False)

    def on_train_epoch_end(self):
        m = self.trainer.callback_metrics
        print(f"epoch {self.current_epoch} train_loss {sum(self.train_losses) / len(self.train_losses):.5f} "
              f"val_loss {m['val_loss'].item():.5f} val_acc {m['val_acc'].item():.4f}")
        self.train_losses.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def make_split(n, length, vocab, g):
    x = torch.randint(3, vocab, (n, length), generator=g)
    pa = torch.randint(0, length, (n,), generator=g)
    pb = (pa + torch.randint(1, length, (n,), generator=g)) % length
    rows = torch.arange(n)
    x[rows, pa] = TOK_A
    x[rows, pb] = TOK_B
    y = (pa < pb).long()
    return TensorDataset(x, y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(Path(__file__).resolve().parent / "config.yaml"))
    cfg = yaml.safe_load(open(parser.parse_args().config))
    pl.seed_everything(cfg["seed"], verbose=False)
    g = torch.Generator().manual_seed(cfg["seed"])
    d = cfg["data"]
    train_ds = make_split(d["train_size"], d["train_len"], cfg["model"]["vocab_size"], g)
    val_ds = make_split(d["val_size"], d["val_len"], cfg["model"]["vocab_size"], g)
    train_dl = DataLoader(train_ds, batch_size=cfg["optim"]["batch_size"], shuffle=True)
    val_dl = DataLoader(val_ds, batch_size=128)

    model = OrderClassifier(**cfg["model"], lr=cfg["optim"]["lr"])
    trainer = pl.Trainer(max_epochs=cfg["optim"]["epochs"], accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    baseline = trainer.validate(model, val_dl, verbose=False)[0]
    print(f"baseline val_loss {baseline['val_loss']:.5f} val_acc {baseline['val_acc']:.4f}")
    trainer.fit(model, train_dl, val_dl)
    checksum = sum(p.detach().double().abs().sum().item() for p in model.parameters())
    print(f"param checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
