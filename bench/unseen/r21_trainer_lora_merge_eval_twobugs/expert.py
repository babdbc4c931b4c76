"""LoRA fine-tuning of a tiny (frozen) causal LM with a small Trainer + callbacks.

* only the LoRA factors are trainable, the base weights are frozen;
* weight decay is applied by a callback to the LoRA factors only (decoupled decay);
* for evaluation, the LoRA deltas are merged into the base weights (faster eval,
  same numbers) and un-merged again afterwards.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, D, CTX = 48, 32, 16


class LoRALinear(nn.Module):
    def __init__(self, d_in, d_out, r=4, alpha=8.0):
        super().__init__()
        self.base = nn.Linear(d_in, d_out, bias=False)
        self.base.weight.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.randn(r, d_in) / math.sqrt(d_in))
        self.lora_B = nn.Parameter(torch.zeros(d_out, r))
        self.scaling = alpha / r
        self.merged = False

    def delta(self):
        return (self.lora_B @ self.lora_A) * self.scaling

    @torch.no_grad()
    def merge(self):
        if not self.merged:
            self.base.weight.add_(self.delta())
            self.merged = True

    @torch.no_grad()
    def unmerge(self):
        if self.merged:
            self.base.weight.sub_(self.delta())
            self.merged = False

    def forward(self, x):
        out = self.base(x)
        if not self.merged:
            out = out + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling
        return out


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(CTX, D)
        self.ln1 = nn.LayerNorm(D)
        self.q = LoRALinear(D, D)
        self.k = nn.Linear(D, D, bias=False)
        self.v = LoRALinear(D, D)
        self.o = nn.Linear(D, D, bias=False)
        self.ln2 = nn.LayerNorm(D)
        self.fc = nn.Linear(D, 2 * D)
        self.proj = nn.Linear(2 * D, D)
        self.head = nn.Linear(D, VOCAB, bias=False)
        mask = torch.triu(torch.ones(CTX, CTX, dtype=torch.bool), 1)
        self.register_buffer("causal", mask)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T))
        h = self.ln1(x)
        q, k, v = self.q(h), self.k(h), self.v(h)
        att = (q @ k.transpose(1, 2)) / math.sqrt(D)
        att = att.masked_fill(self.causal[:T, :T], float("-inf")).softmax(-1)
        x = x + self.o(att @ v)
        x = x + self.proj(F.gelu(self.fc(self.ln2(x))))
        return self.head(x)


def lora_layers(model):
    return [m for m in model.modules() if isinstance(m, LoRALinear)]


class Callback:
    def on_step_end(self, trainer, step, loss):
        pass

    def on_eval_start(self, trainer):
        pass

    def on_eval_end(self, trainer):
        pass


class LoRAWeightDecay(Callback):
    """Decoupled weight decay on the adapter factors only."""

    def __init__(self, wd):
        self.wd = wd

    def on_step_end(self, trainer, step, loss):
        with torch.no_grad():
            for p in trainer.trainable:
                p.mul_(1.0 - trainer.lr * self.wd)


class MergedEval(Callback):
    """Merge the LoRA deltas into the frozen weights for evaluation."""

    def on_eval_start(self, trainer):
        for layer in lora_layers(trainer.model):
            layer.merge()

    def on_eval_end(self, trainer):
        for layer in lora_layers(trainer.model):
            layer.unmerge()


class Trainer:
    def __init__(self, model, train_data, val_data, lr=5e-3, eval_every=4, callbacks=()):
        self.model = model
        self.train_data, self.val_data = train_data, val_data
        self.lr = lr
        self.eval_every = eval_every
        self.callbacks = list(callbacks)
        self.trainable = [p for p in model.parameters() if p.requires_grad]
        self.opt = torch.optim.Adam(self.trainable, lr=lr)
        self.history, self.val_history = [], []

    def lm_loss(self, batch):
        logits = self.model(batch[:, :-1])
        return F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))

    def train_step(self, batch):
        self.model.train()
        self.opt.zero_grad()
        loss = self.lm_loss(batch)
        loss.backward()
        self.opt.step()
        return loss.item()

    def evaluate(self):
        self.model.eval()
        for cb in self.callbacks:
            cb.on_eval_start(self)
        with torch.no_grad():
            val = self.lm_loss(self.val_data).item()
        for cb in self.callbacks:
            cb.on_eval_end(self)
        self.val_history.append(val)
        return val

    def fit(self, steps, batch_size=8):
        g = torch.Generator().manual_seed(3)
        for step in range(steps):
            idx = torch.randint(0, self.train_data.shape[0], (batch_size,), generator=g)
            loss = self.train_step(self.train_data[idx])
            self.history.append(loss)
            for cb in self.callbacks:
                cb.on_step_end(self, step, loss)
            if (step + 1) % self.eval_every == 0:
                self.evaluate()


def make_corpus(n, seed):
    # sequences following a fixed "grammar": next = (3 * cur + 7) % VOCAB, with 10% noise
    g = torch.Generator().manual_seed(seed)
    seq = torch.empty(n, CTX + 1, dtype=torch.long)
    seq[:, 0] = torch.randint(0, VOCAB, (n,), generator=g)
    for t in range(1, CTX + 1):
        nxt = (3 * seq[:, t - 1] + 7) % VOCAB
        noise = torch.rand(n, generator=g) < 0.1
        seq[:, t] = torch.where(noise, torch.randint(0, VOCAB, (n,), generator=g), nxt)
    return seq


def main():
    torch.manual_seed(0)
    model = TinyLM()
    for name, p in model.named_parameters():
        if "lora_" not in name:
            p.requires_grad_(False)
    trainer = Trainer(model, make_corpus(64, 1), make_corpus(16, 2), lr=2e-2, eval_every=4,
                      callbacks=[LoRAWeightDecay(wd=0.5), MergedEval()])
    trainer.fit(steps=12)
    print("train losses:", " ".join(f"{v:.6f}" for v in trainer.history))
    print("val losses:", " ".join(f"{v:.6f}" for v in trainer.val_history))
    lora_sum = sum(p.detach().double().abs().sum().item() for p in trainer.trainable)
    base_sum = sum(l.base.weight.detach().double().sum().item() for l in lora_layers(model))
    print(f"lora checksum: {lora_sum:.6f}  base checksum: {base_sum:.6f}")


if __name__ == "__main__":
    main()
