"""StyleGAN2-lite on 1-D signals: equalized-lr layers, mapping network, non-saturating
losses, lazy path-length regularisation and a G EMA, organised as a Trainer with callbacks."""
import copy
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd


@dataclass
class Config:
    seed: int = 0
    n_real: int = 256
    signal_dim: int = 16
    latent: int = 16
    n_mlp: int = 2
    hidden: int = 32
    batch: int = 32
    path_batch_shrink: int = 2
    epochs: int = 6
    lr: float = 0.002
    g_reg_every: int = 2
    path_regularize: float = 2.0
    path_decay: float = 0.01
    ema_decay: float = 0.9


class PixelNorm(nn.Module):
    def forward(self, x):
        return x * torch.rsqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-8)


class EqualLinear(nn.Module):
    """Linear layer with the equalized learning-rate trick (weights ~ N(0, 1/lr_mul), scaled at runtime)."""

    def __init__(self, in_dim, out_dim, bias_init=0.0, lr_mul=1.0, activation=False):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim).div_(lr_mul))
        self.bias = nn.Parameter(torch.zeros(out_dim).fill_(bias_init))
        self.scale = (1 / math.sqrt(in_dim)) * lr_mul
        self.lr_mul = lr_mul
        self.activation = activation

    def forward(self, x):
        # runtime He scaling, applied to the stored weight to avoid an extra (out, in) temporary
        self.weight.mul_(self.scale)
        out = F.linear(x, self.weight, self.bias * self.lr_mul)
        if self.activation:
            out = F.leaky_relu(out, 0.2) * math.sqrt(2)
        return out


class Generator(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        layers = [PixelNorm()]
        for _ in range(cfg.n_mlp):
            layers.append(EqualLinear(cfg.latent, cfg.latent, lr_mul=0.01, activation=True))
        self.style = nn.Sequential(*layers)
        self.synthesis = nn.Sequential(
            EqualLinear(cfg.latent, cfg.hidden, activation=True),
            EqualLinear(cfg.hidden, cfg.hidden, activation=True),
            EqualLinear(cfg.hidden, cfg.signal_dim),
        )

    def forward(self, z, return_latents=False):
        w = self.style(z)
        out = self.synthesis(w)
        return (out, w) if return_latents else out


class Discriminator(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.net = nn.Sequential(
            EqualLinear(cfg.signal_dim, cfg.hidden, activation=True),
            EqualLinear(cfg.hidden, cfg.hidden, activation=True),
            EqualLinear(cfg.hidden, 1),
        )

    def forward(self, x):
        return self.net(x)


def g_path_regularize(fake_img, latents, mean_path_length, decay=0.01):
    noise = torch.randn_like(fake_img) / math.sqrt(fake_img.shape[1])
    grad, = autograd.grad(outputs=(fake_img * noise).sum(), inputs=latents, create_graph=True)
    path_lengths = torch.sqrt(grad.pow(2).sum(1))
    path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
    path_penalty = (path_lengths - path_mean).pow(2).mean()
    return path_penalty, path_mean, path_lengths


def make_real(cfg, gen):
    t = torch.arange(cfg.signal_dim, dtype=torch.float32) / cfg.signal_dim
    amp = 0.5 + 0.5 * torch.rand(cfg.n_real, 1, generator=gen)
    freq = torch.randint(1, 3, (cfg.n_real, 1), generator=gen).float()
    phase = 2 * math.pi * torch.rand(cfg.n_real, 1, generator=gen)
    return amp * torch.sin(2 * math.pi * freq * t + phase)


class Callback:
    def on_step_end(self, trainer, logs):
        pass

    def on_epoch_end(self, trainer, epoch, logs):
        pass


class EMACallback(Callback):
    def __init__(self, decay):
        self.decay = decay

    def on_step_end(self, trainer, logs):
        with torch.no_grad():
            for p_ema, p in zip(trainer.g_ema.parameters(), trainer.G.parameters()):
                p_ema.mul_(self.decay).add_(p, alpha=1 - self.decay)


class PrintCallback(Callback):
    def on_epoch_end(self, trainer, epoch, logs):
        with torch.no_grad():
            z = torch.randn(256, trainer.cfg.latent, generator=trainer.eval_gen)
            sample = trainer.g_ema(z)
            energy_gap = (sample.pow(2).mean() - trainer.real.pow(2).mean()).abs().item()
        print(f"epoch {epoch} d_loss {logs['d_loss']:.6f} g_loss {logs['g_loss']:.6f} "
              f"path_length {logs['path_length']:.6f} mean_path_length {float(trainer.mean_path_length):.6f} "
              f"ema_energy_gap {energy_gap:.6f}")


class StyleGANTrainer:
    def __init__(self, cfg, callbacks=()):
        self.cfg = cfg
        torch.manual_seed(cfg.seed)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.eval_gen = torch.Generator().manual_seed(cfg.seed + 1)
        self.real = make_real(cfg, self.gen)
        self.G, self.D = Generator(cfg), Discriminator(cfg)
        self.g_ema = copy.deepcopy(self.G).eval()
        g_ratio = cfg.g_reg_every / (cfg.g_reg_every + 1)
        self.g_optim = torch.optim.Adam(self.G.parameters(), lr=cfg.lr * g_ratio,
                                        betas=(0 ** g_ratio, 0.99 ** g_ratio))
        self.d_optim = torch.optim.Adam(self.D.parameters(), lr=cfg.lr, betas=(0.0, 0.99))
        self.callbacks = list(callbacks)
        self.mean_path_length = 0.0
        self.global_step = 0

    def noise(self, n):
        return torch.randn(n, self.cfg.latent, generator=self.gen)

    def train_step(self, real):
        cfg, logs = self.cfg, {}
        # discriminator
        fake = self.G(self.noise(real.size(0)))
        d_loss = F.softplus(self.D(fake.detach())).mean() + F.softplus(-self.D(real)).mean()
        self.d_optim.zero_grad()
        d_loss.backward()
        self.d_optim.step()
        logs["d_loss"] = d_loss.item()
        # generator
        fake = self.G(self.noise(real.size(0)))
        g_loss = F.softplus(-self.D(fake)).mean()
        self.G.zero_grad()
        g_loss.backward()
        self.g_optim.step()
        logs["g_loss"] = g_loss.item()
        # lazy path-length regularisation
        if self.global_step % cfg.g_reg_every == 0:
            path_batch = max(1, real.size(0) // cfg.path_batch_shrink)
            fake_img, latents = self.G(self.noise(path_batch), return_latents=True)
            path_loss, self.mean_path_length, path_lengths = g_path_regularize(
                fake_img, latents, self.mean_path_length, cfg.path_decay)
            weighted_path_loss = cfg.path_regularize * cfg.g_reg_every * path_loss
            self.G.zero_grad()
            weighted_path_loss.backward()
            self.g_optim.step()
            logs["path_length"] = path_lengths.mean().item()
        self.global_step += 1
        return logs

    def fit(self):
        cfg = self.cfg
        for epoch in range(cfg.epochs):
            perm = torch.randperm(cfg.n_real, generator=self.gen)
            sums = {"d_loss": 0.0, "g_loss": 0.0, "path_length": 0.0}
            counts = {k: 0 for k in sums}
            for i in range(0, cfg.n_real, cfg.batch):
                logs = self.train_step(self.real[perm[i:i + cfg.batch]])
                for k, v in logs.items():
                    sums[k] += v
                    counts[k] += 1
                for cb in self.callbacks:
                    cb.on_step_end(self, logs)
            epoch_logs = {k: sums[k] / max(counts[k], 1) for k in sums}
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, epoch_logs)
        total = sum(p.sum().item() for p in self.G.parameters()) + sum(p.sum().item() for p in self.D.parameters())
        print(f"checksum {total:.6f}")


if __name__ == "__main__":
    cfg = Config()
    StyleGANTrainer(cfg, callbacks=[EMACallback(cfg.ema_decay), PrintCallback()]).fit()
