import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning.pytorch as pl


class StatefulGRULM(pl.LightningModule):
    """Truncated BPTT done by hand (Lightning 2.x removed truncated_bptt_steps):
    manual optimization, hidden state carried from one batch to the next."""

    def __init__(self, vocab=24, emb=16, hidden=48, lr=3e-3, max_norm=1.0, clip=0.5):
        super().__init__()
        self.save_hyperparameters()
        self.automatic_optimization = False
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)
        self.hidden = None
        self.epoch_losses, self._losses = [], []

    def forward(self, x, h=None):
        out, h = self.rnn(self.embed(x), h)
        return self.decoder(out), h

    def on_train_epoch_start(self):
        self.hidden = None

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizers()
        logits, h = self(x, self.hidden)
        self.hidden = h
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))

        opt.zero_grad()
        self.manual_backward(loss)
        self.clip_gradients(opt, gradient_clip_val=self.hparams.clip, gradient_clip_algorithm="norm")
        opt.step()
        self.apply_max_norm()
        self._losses.append(loss.item())

    def apply_max_norm(self):
        # max-norm constraint on the output embeddings (one row per token)
        w = self.decoder.weight
        norms = w.norm(dim=1, keepdim=True)
        w.div_(norms.clamp(min=self.hparams.max_norm) / self.hparams.max_norm)

    def on_train_epoch_end(self):
        self.epoch_losses.append(sum(self._losses) / len(self._losses))
        self._losses = []

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
