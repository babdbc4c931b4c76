"""Perceiver-style set classifier in PyTorch Lightning 2.x.

A learned latent array cross-attends to a set of 2-d points (is the set a ring, a segment or a
blob?), then a few latent self-attention blocks and a mean-pooled classification head.
"""
import math
import shutil
import tempfile

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_sets(n, n_points, gen):
    xs, ys = [], []
    for _ in range(n):
        label = int(torch.randint(0, 3, (1,), generator=gen))
        center = torch.randn(2, generator=gen) * 0.1
        if label == 0:  # ring
            ang = torch.rand(n_points, generator=gen) * 2 * math.pi
            pts = torch.stack([torch.cos(ang), torch.sin(ang)], 1) * (0.6 + 0.4 * torch.rand(1, generator=gen))
        elif label == 1:  # segment
            t = torch.rand(n_points, 1, generator=gen) * 2 - 1
            d = F.normalize(torch.randn(1, 2, generator=gen), dim=1)
            pts = t * d
        else:  # blob
            pts = torch.randn(n_points, 2, generator=gen) * 0.3
        xs.append(pts + center + 0.05 * torch.randn(n_points, 2, generator=gen))
        ys.append(label)
    return torch.stack(xs), torch.tensor(ys)


class CrossAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm_q, self.norm_kv = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, latents, data):
        kv = self.norm_kv(data)
        out, _ = self.attn(self.norm_q(latents), kv, kv, need_weights=False)
        return out


class FeedForward(nn.Module):
    def __init__(self, dim, mult=2):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * mult), nn.GELU(),
                                 nn.Linear(dim * mult, dim))

    def forward(self, x):
        return self.net(x)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x):
        h = self.norm(x)
        return self.attn(h, h, h, need_weights=False)[0]


class PerceiverClassifier(L.LightningModule):
    def __init__(self, dim=32, num_latents=8, heads=2, depth=2, num_classes=3, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.latents = nn.Parameter(torch.randn(num_latents, dim) * 0.2)
        self.input_proj = nn.Sequential(nn.Linear(2, dim), nn.GELU(), nn.Linear(dim, dim))
        self.cross_attn = CrossAttention(dim, heads)
        self.cross_ff = FeedForward(dim)
        self.layers = nn.ModuleList(
            [nn.ModuleList([SelfAttention(dim, heads), FeedForward(dim)]) for _ in range(depth)])
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))
        self._train_losses, self._val = [], []

    def forward(self, points):
        data = self.input_proj(points)
        x = self.latents.unsqueeze(0).expand(points.size(0), -1, -1)
        x += self.cross_attn(x, data)
        x = x + self.cross_ff(x)
        for attn, ff in self.layers:
            x = x + attn(x)
            x = x + ff(x)
        return self.head(x.mean(dim=1))

    def training_step(self, batch, batch_idx):
        points, y = batch
        loss = F.cross_entropy(self(points), y)
        self._train_losses.append(loss.detach())
        return loss

    def validation_step(self, batch, batch_idx):
        points, y = batch
        logits = self(points)
        self._val.append((F.cross_entropy(logits, y, reduction="sum"), (logits.argmax(1) == y).sum(), y.numel()))

    def on_validation_epoch_end(self):
        n = sum(v[2] for v in self._val)
        val_loss = sum(v[0] for v in self._val).item() / n
        val_acc = sum(v[1] for v in self._val).item() / n
        train_loss = torch.stack(self._train_losses).mean().item()
        print(f"epoch {self.current_epoch} train_loss {train_loss:.6f} val_loss {val_loss:.6f} val_acc {val_acc:.6f}")
        self._train_losses, self._val = [], []

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=1e-4)


def main():
    L.seed_everything(0, verbose=False)
    gen = torch.Generator().manual_seed(0)
    x_tr, y_tr = make_sets(384, 16, gen)
    x_va, y_va = make_sets(128, 16, gen)
    train_loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=32, shuffle=True,
                              generator=torch.Generator().manual_seed(0))
    val_loader = DataLoader(TensorDataset(x_va, y_va), batch_size=64)
    model = PerceiverClassifier()
    root = tempfile.mkdtemp()
    try:
        trainer = L.Trainer(max_epochs=8, accelerator="cpu", devices=1, default_root_dir=root,
                            enable_checkpointing=False, logger=False, enable_progress_bar=False,
                            enable_model_summary=False, num_sanity_val_steps=0, deterministic=True)
        trainer.fit(model, train_loader, val_loader)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
