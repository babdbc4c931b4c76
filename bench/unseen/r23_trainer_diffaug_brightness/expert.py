"""Tiny GAN trained with Differentiable Augmentation (Zhao et al. 2020) inside a Trainer."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- DiffAugment (color policy) ----
def rand_brightness(x):
    return x + (torch.rand(x.size(0), 1, 1, 1) - 0.5)


def rand_saturation(x):
    x_mean = x.mean(dim=1, keepdim=True)
    return (x - x_mean) * (torch.rand(x.size(0), 1, 1, 1) * 2) + x_mean


def rand_contrast(x):
    x_mean = x.mean(dim=[1, 2, 3], keepdim=True)
    return (x - x_mean) * (torch.rand(x.size(0), 1, 1, 1) + 0.5) + x_mean


def diff_augment(x, policy=(rand_brightness, rand_saturation, rand_contrast)):
    for fn in policy:
        x = fn(x)
    return x


class Generator(nn.Module):
    def __init__(self, z_dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 64), nn.ReLU(), nn.Linear(64, 3 * 4 * 4), nn.Tanh())

    def forward(self, z):
        return self.net(z).view(-1, 3, 4, 4)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(48, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


class EMACallback:
    def __init__(self, decay=0.9):
        self.decay = decay
        self.g_ema = None

    def on_step_end(self, trainer, step, logs):
        if self.g_ema is None:
            self.g_ema = copy.deepcopy(trainer.G).requires_grad_(False)
        with torch.no_grad():
            for pe, p in zip(self.g_ema.parameters(), trainer.G.parameters()):
                pe.lerp_(p, 1 - self.decay)


class LogCallback:
    def on_step_end(self, trainer, step, logs):
        if step % 10 == 0 or step == trainer.steps - 1:
            print(f"step {step} d_loss {logs['d']:.6f} g_loss {logs['g']:.6f}")


class GANTrainer:
    def __init__(self, G, D, steps, batch, z_dim, callbacks):
        self.G, self.D = G, D
        self.opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.99))
        self.opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.99))
        self.steps, self.batch, self.z_dim = steps, batch, z_dim
        self.callbacks = callbacks

    def train_step(self, real):
        z = torch.randn(real.size(0), self.z_dim)
        fake = self.G(z)
        # D step: non-saturating loss on augmented real / fake
        d_loss = F.softplus(-self.D(diff_augment(real))).mean() + \
            F.softplus(self.D(diff_augment(fake.detach()))).mean()
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()
        # G step
        g_loss = F.softplus(-self.D(diff_augment(fake))).mean()
        self.opt_g.zero_grad()
        g_loss.backward()
        self.opt_g.step()
        return {"d": d_loss.item(), "g": g_loss.item()}

    def fit(self, data):
        for step in range(self.steps):
            real = data[torch.randint(0, data.size(0), (self.batch,))]
            logs = self.train_step(real)
            for cb in self.callbacks:
                cb.on_step_end(self, step, logs)


def main():
    torch.manual_seed(0)
    base = torch.tensor([0.6, -0.2, 0.1]).view(1, 3, 1, 1)
    data = (base + 0.3 * torch.randn(256, 3, 4, 4)).clamp(-1, 1)
    G, D = Generator(), Discriminator()
    ema = EMACallback()
    trainer = GANTrainer(G, D, steps=30, batch=32, z_dim=8, callbacks=[ema, LogCallback()])
    trainer.fit(data)
    with torch.no_grad():
        sample = ema.g_ema(torch.randn(64, 8))
    print(f"ema sample mean {sample.mean().item():.6f}")
    print(f"checksum G {sum(p.sum() for p in G.parameters()).item():.6f} D {sum(p.sum() for p in D.parameters()).item():.6f}")


if __name__ == "__main__":
    main()
