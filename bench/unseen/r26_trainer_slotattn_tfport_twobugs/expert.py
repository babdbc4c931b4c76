"""Object discovery with Slot Attention on synthetic sprites: a Trainer with callbacks."""
import math

import torch
import torch.nn.functional as F

from slotlib import SlotAttentionAutoEncoder, make_sprites


class Callback:
    def on_step_begin(self, trainer, step):
        pass

    def on_epoch_end(self, trainer, epoch, logs):
        pass


class WarmupDecay(Callback):
    """Linear warm-up then exponential decay, as in the Slot Attention training script."""

    def __init__(self, base_lr, warmup_steps, decay_rate=0.5, decay_steps=200):
        self.base_lr, self.warmup_steps = base_lr, warmup_steps
        self.decay_rate, self.decay_steps = decay_rate, decay_steps

    def on_step_begin(self, trainer, step):
        lr = self.base_lr * min(1.0, (step + 1) / self.warmup_steps)
        lr *= self.decay_rate ** (step / self.decay_steps)
        for g in trainer.optimizer.param_groups:
            g["lr"] = lr


class EpochLogger(Callback):
    def on_epoch_end(self, trainer, epoch, logs):
        print(f"epoch {epoch} train_mse {logs['train_mse']:.6f} val_mse {logs['val_mse']:.6f} "
              f"mask_entropy {logs['mask_entropy']:.6f} lr {trainer.optimizer.param_groups[0]['lr']:.6f}")


class SlotTrainer:
    def __init__(self, model, optimizer, callbacks=()):
        self.model, self.optimizer = model, optimizer
        self.callbacks = list(callbacks)
        self.global_step = 0

    def train_step(self, batch):
        self.model.train()
        for cb in self.callbacks:
            cb.on_step_begin(self, self.global_step)
        recon, _, _, _ = self.model(batch)
        loss = F.mse_loss(recon, batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.global_step += 1
        return loss.item()

    @torch.no_grad()
    def evaluate(self, data):
        self.model.eval()
        recon, _, masks, _ = self.model(data)
        ent = -(masks.clamp_min(1e-8) * masks.clamp_min(1e-8).log()).sum(1).mean()
        return F.mse_loss(recon, data).item(), ent.item()

    def fit(self, train, val, epochs, batch_size, gen):
        for epoch in range(epochs):
            perm = torch.randperm(train.size(0), generator=gen)
            losses = [self.train_step(train[perm[i:i + batch_size]])
                      for i in range(0, train.size(0), batch_size)]
            val_mse, ent = self.evaluate(val)
            logs = {"train_mse": sum(losses) / len(losses), "val_mse": val_mse, "mask_entropy": ent}
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, logs)


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    train = make_sprites(128, 16, gen)
    val = make_sprites(32, 16, gen)
    model = SlotAttentionAutoEncoder(resolution=(16, 16), num_slots=3, hid=16, iters=3)
    base_lr = 4e-3
    optimizer = torch.optim.Adam(model.parameters(), lr=base_lr)
    trainer = SlotTrainer(model, optimizer, callbacks=[WarmupDecay(base_lr, warmup_steps=8), EpochLogger()])
    trainer.fit(train, val, epochs=5, batch_size=16, gen=gen)
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
