import contextlib
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset

from config import TrainConfig


def make_signals(n, length, num_classes, gen):
    y = torch.randint(0, num_classes, (n,), generator=gen)
    t = torch.linspace(0, 1, length)
    freq = 3.0 + 4.0 * y.float()
    phase = 2 * math.pi * torch.rand(n, 1, generator=gen)
    x = torch.sin(2 * math.pi * freq.view(-1, 1) * t + phase)
    x = x + 0.8 * torch.randn(n, length, generator=gen)
    return x.unsqueeze(1), y


class FeatureEncoder(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv1d(1, channels, kernel_size=5, stride=2, padding=2)
        self.conv2 = nn.Conv1d(channels, channels, kernel_size=5, stride=2, padding=2)

    def forward(self, x):
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        return x.mean(dim=-1)


class AudioClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.feature_encoder = FeatureEncoder(cfg.channels)
        self.head = nn.Sequential(nn.LayerNorm(cfg.channels), nn.Linear(cfg.channels, cfg.hidden),
                                  nn.GELU(), nn.Linear(cfg.hidden, cfg.num_classes))
        self.feature_grad_mult = cfg.feature_grad_mult
        self.freeze_feature_encoder = False

    def _scale_grad(self, grad):
        return grad * self.feature_grad_mult

    def forward(self, x):
        ctx = torch.no_grad() if self.freeze_feature_encoder else contextlib.nullcontext()
        with ctx:
            features = self.feature_encoder(x)
        if self.feature_grad_mult != 1.0 and features.requires_grad:
            features.register_hook(self._scale_grad)
        logits = self.head(features)
        return logits


def evaluate(model, loader):
    model.eval()
    correct, n, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(-1) == y).sum().item()
            n += y.numel()
    model.train()
    return loss_sum / n, correct / n


def main():
    cfg = TrainConfig()
    set_seed(cfg.seed)
    accelerator = Accelerator(cpu=True, gradient_accumulation_steps=cfg.grad_accum_steps)
    gen = torch.Generator().manual_seed(cfg.seed)
    x_tr, y_tr = make_signals(cfg.n_train, cfg.signal_len, cfg.num_classes, gen)
    x_ev, y_ev = make_signals(cfg.n_eval, cfg.signal_len, cfg.num_classes, gen)
    train_loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=cfg.batch_size, shuffle=True)
    eval_loader = DataLoader(TensorDataset(x_ev, y_ev), batch_size=96)

    model = AudioClassifier(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    model, optimizer, train_loader, eval_loader = accelerator.prepare(model, optimizer, train_loader, eval_loader)

    updates = 0
    for epoch in range(1, cfg.epochs + 1):
        running = []
        for x, y in train_loader:
            with accelerator.accumulate(model):
                model.freeze_feature_encoder = updates < cfg.freeze_encoder_steps
                logits = model(x)
                loss = F.cross_entropy(logits, y)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                updates += 1
            running.append(loss.item())
        ev_loss, ev_acc = evaluate(model, eval_loader)
        print(f"epoch {epoch} updates {updates} train_loss {sum(running) / len(running):.4f} "
              f"eval_loss {ev_loss:.4f} eval_acc {ev_acc:.4f}")
    enc = sum(p.abs().sum().item() for p in model.feature_encoder.parameters())
    head = sum(p.abs().sum().item() for p in model.head.parameters())
    print(f"encoder_checksum {enc:.4f} head_checksum {head:.4f}")


if __name__ == "__main__":
    main()
