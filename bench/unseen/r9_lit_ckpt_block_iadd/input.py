"""Lightning sequence classifier with per-block positional re-injection.

Blocks are wrapped in torch.utils.checkpoint when `grad_checkpointing` is on.
"""
import argparse
import warnings

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")


class Block(nn.Module):
    def __init__(self, d_model, n_heads, seq_len):
        super().__init__()
        # each block re-injects a learned positional bias before attending
        self.pos_bias = nn.Parameter(torch.zeros(seq_len, d_model))
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))

    def forward(self, x):
        x += self.pos_bias
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        x = x + a
        return x + self.mlp(self.norm2(x))


class SeqClassifier(L.LightningModule):
    def __init__(self, vocab_size, d_model, n_heads, depth, seq_len, n_classes,
                 grad_checkpointing, lr, weight_decay):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_heads, seq_len) for _ in range(depth)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes)
        self.train_log = []

    def forward(self, tokens):
        x = self.embed(tokens)
        for blk in self.blocks:
            if self.hparams.grad_checkpointing and self.training:
                x = checkpoint(blk, x, use_reentrant=True)
            else:
                x = blk(x)
        return self.head(self.norm(x).mean(dim=1))

    def training_step(self, batch, batch_idx):
        tokens, y = batch
        loss = F.cross_entropy(self(tokens), y)
        if batch_idx % 4 == 0:
            self.train_log.append((self.current_epoch, batch_idx, loss.item()))
        return loss

    def validation_step(self, batch, batch_idx):
        tokens, y = batch
        logits = self(tokens)
        self.val_stats.append((F.cross_entropy(logits, y, reduction="sum").item(),
                               (logits.argmax(-1) == y).sum().item(), len(y)))

    def on_validation_epoch_start(self):
        self.val_stats = []

    def on_validation_epoch_end(self):
        tot = sum(n for _, _, n in self.val_stats)
        loss = sum(l for l, _, _ in self.val_stats) / tot
        acc = sum(c for _, c, _ in self.val_stats) / tot
        if not self.trainer.sanity_checking:
            print(f"epoch {self.current_epoch} val_loss {loss:.5f} val_acc {acc:.4f}")

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr,
                                 weight_decay=self.hparams.weight_decay)


def make_data(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    m, d = cfg["model"], cfg["data"]
    n = d["n_train"] + d["n_val"]
    tokens = torch.randint(0, m["vocab_size"], (n, m["seq_len"]), generator=g)
    # label: which quarter of the vocabulary dominates the first half of the sequence
    first = tokens[:, : m["seq_len"] // 2] * m["n_classes"] // m["vocab_size"]
    y = torch.mode(first, dim=1).values
    tr = TensorDataset(tokens[: d["n_train"]], y[: d["n_train"]])
    va = TensorDataset(tokens[d["n_train"]:], y[d["n_train"]:])
    return (DataLoader(tr, batch_size=d["batch_size"], shuffle=True, generator=g),
            DataLoader(va, batch_size=d["batch_size"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="config.yaml")
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    L.seed_everything(cfg["seed"], verbose=False)
    torch.set_num_threads(1)
    train_dl, val_dl = make_data(cfg, cfg["seed"])
    model = SeqClassifier(**cfg["model"], **cfg["optim"])
    trainer = L.Trainer(max_epochs=cfg["trainer"]["max_epochs"], accelerator="cpu", devices=1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, num_sanity_val_steps=0)
    trainer.fit(model, train_dl, val_dl)
    for ep, b, loss in model.train_log:
        print(f"train epoch {ep} batch {b} loss {loss:.5f}")
    pos_norms = " ".join(f"{blk.pos_bias.norm().item():.5f}" for blk in model.blocks)
    print("pos_bias norms:", pos_norms)
    print(f"head weight norm {model.head.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
