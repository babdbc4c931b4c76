"""Fine-tune a small transformer while pruning attention heads (Michel et al., 2019).

During the first epoch a callback accumulates the head importance
I_h = sum_batches |d loss / d m_h| with respect to a head mask m (all ones);
at the end of that epoch the least important heads are ablated with forward hooks
on the attention-softmax modules, and training continues with the pruned model.

Run:  python input.py
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class Config:
    vocab: int = 16
    seq_len: int = 12
    dim: int = 32
    heads: int = 4
    layers: int = 2
    n_train: int = 512
    batch_size: int = 32
    epochs: int = 3
    lr: float = 3e-3
    importance_epochs: int = 1
    heads_to_prune: int = 3
    seed: int = 0


# ============================================================================ data
def make_data(cfg):
    """Label = 1 if token 3 occurs more often than token 7 in the sequence."""
    g = torch.Generator().manual_seed(cfg.seed)
    x = torch.randint(0, cfg.vocab, (cfg.n_train, cfg.seq_len), generator=g)
    y = ((x == 3).sum(1) > (x == 7).sum(1)).long()
    return x, y


def loader(x, y, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(x), generator=g)
    for i in range(0, len(x), batch_size):
        idx = perm[i:i + batch_size]
        yield x[idx], y[idx]


# ============================================================================ model
class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x, head_mask=None):
        b, t, d = x.shape
        qkv = self.qkv(x).reshape(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        probs = self.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.head_dim))
        if head_mask is not None:
            probs = probs * head_mask.view(1, -1, 1, 1)
        out = (probs @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x, head_mask=None):
        x = x + self.attn(self.ln1(x), head_mask)
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.dim)
        self.pos = nn.Parameter(0.02 * torch.randn(cfg.seq_len, cfg.dim))
        self.blocks = nn.ModuleList(Block(cfg.dim, cfg.heads) for _ in range(cfg.layers))
        self.head = nn.Linear(cfg.dim, 2)

    def forward(self, x, head_mask=None):
        h = self.tok(x) + self.pos
        for i, blk in enumerate(self.blocks):
            h = blk(h, None if head_mask is None else head_mask[i])
        return self.head(h.mean(1))


# ============================================================================ hooks
class HeadAblationHook:
    """Forward hook on an attention-softmax module that zeroes the given heads."""

    def __init__(self, heads):
        self.heads = list(heads)

    def __call__(self, module, inputs, output):
        output[:, self.heads] = 0.0


def ablate_heads(model, plan):
    handles = []
    for layer, heads in plan.items():
        if heads:
            handles.append(model.blocks[layer].attn.softmax.register_forward_hook(HeadAblationHook(heads)))
    return handles


# ============================================================================ callbacks
class Callback:
    def on_fit_start(self, trainer): ...
    def on_after_forward(self, trainer, loss): ...
    def on_epoch_end(self, trainer): ...


class HeadImportanceCallback(Callback):
    """Accumulate |d loss / d head_mask| during the first epochs, then prune."""

    def __init__(self, epochs, n_prune):
        self.epochs, self.n_prune = epochs, n_prune
        self.importance = None

    def on_fit_start(self, trainer):
        shape = (trainer.cfg.layers, trainer.cfg.heads)
        trainer.head_mask = torch.ones(shape, requires_grad=True)
        self.importance = torch.zeros(shape)

    def on_after_forward(self, trainer, loss):
        if trainer.epoch < self.epochs:
            (g,) = torch.autograd.grad(loss, trainer.head_mask)
            self.importance += g.abs()

    def on_epoch_end(self, trainer):
        if trainer.epoch != self.epochs - 1:
            return
        imp = self.importance / self.importance.sum(1, keepdim=True)  # layer-wise normalisation
        order = imp.flatten().argsort()[: self.n_prune].tolist()
        plan = {}
        for flat in order:
            plan.setdefault(flat // trainer.cfg.heads, []).append(flat % trainer.cfg.heads)
        print("importance", " ".join(f"{v:.6f}" for v in imp.flatten().tolist()))
        print("pruning", {k: sorted(v) for k, v in sorted(plan.items())})
        trainer.hook_handles = ablate_heads(trainer.model, plan)
        trainer.head_mask = None


class LoggingCallback(Callback):
    def on_epoch_end(self, trainer):
        print(f"epoch {trainer.epoch} loss {trainer.epoch_loss:.6f} acc {trainer.epoch_acc:.4f}")


# ============================================================================ trainer
class Trainer:
    def __init__(self, cfg, model, callbacks):
        self.cfg = cfg
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
        self.callbacks = callbacks
        self.head_mask = None
        self.hook_handles = []
        self.epoch = 0

    def _emit(self, name, *args):
        for cb in self.callbacks:
            getattr(cb, name)(self, *args)

    def training_step(self, x, y):
        logits = self.model(x, head_mask=self.head_mask)
        loss = F.cross_entropy(logits, y)
        self._emit("on_after_forward", loss)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item(), (logits.argmax(1) == y).float().mean().item()

    def fit(self, x, y):
        self._emit("on_fit_start")
        for self.epoch in range(self.cfg.epochs):
            losses, accs = [], []
            for xb, yb in loader(x, y, self.cfg.batch_size, self.cfg.seed + self.epoch):
                l, a = self.training_step(xb, yb)
                losses.append(l)
                accs.append(a)
            self.epoch_loss = sum(losses) / len(losses)
            self.epoch_acc = sum(accs) / len(accs)
            self._emit("on_epoch_end")


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    x, y = make_data(cfg)
    model = TinyTransformer(cfg)
    trainer = Trainer(cfg, model, [HeadImportanceCallback(cfg.importance_epochs, cfg.heads_to_prune),
                                   LoggingCallback()])
    trainer.fit(x, y)
    checksum = sum(p.double().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
