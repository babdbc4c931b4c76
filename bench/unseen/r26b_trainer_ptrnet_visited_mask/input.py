"""Pointer network that learns to sort a list of numbers (Vinyals et al. 2015).

Trainer-style project: the Trainer owns model / optimizer / scheduler, runs
callbacks, and evaluates each epoch. The decoder points at one input position
per step and a visited mask stops it from pointing at the same element twice.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PointerNet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.embed = nn.Linear(1, hidden)
        self.encoder = nn.LSTM(hidden, hidden, batch_first=True)
        self.decoder = nn.LSTMCell(hidden, hidden)
        self.start = nn.Parameter(torch.zeros(hidden))
        self.W_enc = nn.Linear(hidden, hidden, bias=False)
        self.W_dec = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, 1, bias=False)

    def forward(self, x, order):
        """x: [B, N] values, order: [B, N] target permutation (teacher forcing).

        Returns the per-step pointer distributions, [B, N, N].
        """
        B, N = x.shape
        emb = self.embed(x.unsqueeze(-1))                      # [B, N, H]
        enc, (h, c) = self.encoder(emb)
        h, c = h[0], c[0]
        enc_proj = self.W_enc(enc)                              # [B, N, H]
        rows = torch.arange(B)
        mask = torch.ones(B, N)                                 # 1 = still available
        dec_in = self.start.expand(B, -1)
        dists = []
        for t in range(N):
            h, c = self.decoder(dec_in, (h, c))
            scores = self.v(torch.tanh(enc_proj + self.W_dec(h).unsqueeze(1))).squeeze(-1)
            p = F.softmax(scores, dim=-1) * mask
            p = p / p.sum(dim=-1, keepdim=True)
            dists.append(p)
            idx = order[:, t]
            # the element just pointed at can not be chosen again
            mask[rows, idx] = 0.0
            dec_in = emb[rows, idx]
        return torch.stack(dists, dim=1)


class LoggerCallback:
    def on_epoch_end(self, trainer, epoch, logs):
        print(f"epoch {epoch} loss {logs['loss']:.6f} val_loss {logs['val_loss']:.6f} "
              f"val_seq_acc {logs['val_acc']:.6f} lr {logs['lr']:.6f}")


class GradClipCallback:
    def __init__(self, max_norm):
        self.max_norm = max_norm

    def on_after_backward(self, trainer):
        torch.nn.utils.clip_grad_norm_(trainer.model.parameters(), self.max_norm)


class Trainer:
    def __init__(self, model, lr=3e-3, epochs=5, callbacks=()):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=2, gamma=0.5)
        self.epochs = epochs
        self.callbacks = list(callbacks)

    def _call(self, hook, *args):
        for cb in self.callbacks:
            fn = getattr(cb, hook, None)
            if fn is not None:
                fn(self, *args)

    @staticmethod
    def nll(dists, order):
        picked = dists.gather(2, order.unsqueeze(-1)).squeeze(-1)
        return -(picked + 1e-9).log().mean()

    def train_step(self, x, order):
        self.model.train()
        dists = self.model(x, order)
        loss = self.nll(dists, order)
        self.optimizer.zero_grad()
        loss.backward()
        self._call("on_after_backward")
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self, x, order):
        self.model.eval()
        dists = self.model(x, order)
        loss = self.nll(dists, order).item()
        acc = (dists.argmax(-1) == order).all(dim=1).float().mean().item()
        return loss, acc

    def fit(self, train_batches, val):
        for epoch in range(self.epochs):
            total = 0.0
            for x, order in train_batches:
                total += self.train_step(x, order)
            lr = self.scheduler.get_last_lr()[0]
            self.scheduler.step()
            val_loss, val_acc = self.evaluate(*val)
            logs = {"loss": total / len(train_batches), "val_loss": val_loss,
                    "val_acc": val_acc, "lr": lr}
            self._call("on_epoch_end", epoch, logs)


def make_batch(g, batch, n):
    x = torch.rand(batch, n, generator=g)
    return x, x.argsort(dim=1)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    train_batches = [make_batch(g, 64, 6) for _ in range(12)]
    val = make_batch(g, 128, 6)
    model = PointerNet(hidden=32)
    trainer = Trainer(model, lr=3e-3, epochs=5,
                      callbacks=[GradClipCallback(1.0), LoggerCallback()])
    trainer.fit(train_batches, val)
    checksum = sum(p.detach().double().abs().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
