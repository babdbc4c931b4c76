"""Token classifier (mean-pooled embeddings + MLP) in Lightning, written with in-place ops
for memory: every one of them is legal for autograd."""
import argparse
import math

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

PAD = 0


class Classifier(L.LightningModule):
    def __init__(self, vocab=50, dim=24, n_classes=3, max_len=12, lr=3e-3, smoothing=0.1):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, dim)
        self.fc1 = nn.Linear(2 * dim, 48)
        self.drop = nn.Dropout(0.1, inplace=True)
        self.fc2 = nn.Linear(48, n_classes)
        self.shift = nn.Parameter(torch.zeros(2 * dim))
        self.register_buffer("feat_mean", torch.zeros(2 * dim))
        self.losses = []

    def forward(self, tokens):
        pad = tokens.eq(PAD)
        h = self.embed(tokens)
        h *= math.sqrt(self.hparams.dim)                 # embedding output: not saved by anyone
        h += self.pos.weight[: tokens.shape[1]]          # add saves nothing
        h.masked_fill_(pad[..., None], 0.0)              # zero the padding positions
        lengths = (~pad).sum(1, keepdim=True).clamp_(min=1)
        mean = h.sum(1).div_(lengths)                    # sum's output, not saved
        mx = h.max(1).values
        feat = torch.cat([mean, mx], dim=1)
        feat += self.shift                               # cat output, not saved
        if self.training:
            with torch.no_grad():
                self.feat_mean.mul_(0.9).add_(feat.mean(0), alpha=0.1)
        x = self.fc1(feat)
        x = self.drop(x)                                 # in-place dropout of a Linear output: saves its mask
        x.relu_()                                        # relu_ saves its result, nobody writes it again
        return self.fc2(x)

    def training_step(self, batch, batch_idx):
        tokens, y = batch
        logits = self(tokens)
        target = torch.full_like(logits, self.hparams.smoothing / (self.hparams.n_classes - 1))
        target.scatter_(1, y[:, None], 1.0 - self.hparams.smoothing)
        loss = torch.sum(-target * F.log_softmax(logits, -1), dim=-1).mean()
        self.losses.append(loss.item())
        return loss

    def on_train_epoch_end(self):
        print(f"epoch {self.current_epoch} loss {sum(self.losses) / len(self.losses):.4f}")
        self.losses.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def make_data(n, seed, vocab=50, max_len=12):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, vocab, (n, max_len), generator=g)
    lengths = torch.randint(4, max_len + 1, (n,), generator=g)
    tokens[torch.arange(max_len)[None, :] >= lengths[:, None]] = PAD
    y = ((tokens % 3 == 0).sum(1) - (tokens % 3 == 1).sum(1)).sign().add(1).long()
    return tokens, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    L.seed_everything(args.seed, verbose=False)
    x, y = make_data(480, args.seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    model = Classifier()
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, loader)
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    print(f"final train_acc {acc:.4f} feat_mean_norm {model.feat_mean.norm().item():.4f}")


if __name__ == "__main__":
    main()
