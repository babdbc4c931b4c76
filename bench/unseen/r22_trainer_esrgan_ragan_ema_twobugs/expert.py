"""ESRGAN-style x2 super-resolution trainer (BasicSR layout): L1 + relativistic-average GAN, EMA of G."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

CFG = {"seed": 0, "iters": 6, "batch": 4, "lr_g": 2e-4, "lr_d": 2e-4, "gan_weight": 0.05,
       "ema_decay": 0.9}


class TinySRNet(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.head = nn.Conv2d(3, ch, 3, padding=1)
        self.body = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.LeakyReLU(0.2),
                                  nn.Conv2d(ch, ch, 3, padding=1))
        self.up = nn.Conv2d(ch, 3 * 4, 3, padding=1)

    def forward(self, x):
        h = self.head(x)
        h = h + self.body(h)
        base = F.interpolate(x, scale_factor=2, mode="nearest")
        return base + F.pixel_shuffle(self.up(h), 2)


class VGGStyleDisc(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(ch, ch, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(ch, 1))

    def forward(self, x):
        return self.net(x)


def gan_loss(pred, target_is_real):
    target = torch.ones_like(pred) if target_is_real else torch.zeros_like(pred)
    return F.binary_cross_entropy_with_logits(pred, target)


class EMACallback:
    def __init__(self, decay):
        self.decay = decay

    def on_train_batch_end(self, trainer):
        decay = self.decay
        with torch.no_grad():
            for p_ema, p in zip(trainer.net_g_ema.parameters(), trainer.net_g.parameters()):
                p_ema.mul_(decay).add_(p, alpha=1 - decay)


class ESRGANTrainer:
    def __init__(self, cfg, callbacks=()):
        self.cfg = cfg
        self.net_g = TinySRNet()
        self.net_d = VGGStyleDisc()
        self.net_g_ema = copy.deepcopy(self.net_g).eval()
        self.opt_g = torch.optim.Adam(self.net_g.parameters(), lr=cfg["lr_g"], betas=(0.9, 0.99))
        self.opt_d = torch.optim.Adam(self.net_d.parameters(), lr=cfg["lr_d"], betas=(0.9, 0.99))
        self.callbacks = list(callbacks)
        self.log = []

    def train_step(self, lq, gt):
        # ---- generator ----
        for p in self.net_d.parameters():
            p.requires_grad = False
        self.opt_g.zero_grad()
        self.output = self.net_g(lq)
        l_pix = F.l1_loss(self.output, gt)
        real_d_pred = self.net_d(gt).detach()
        fake_g_pred = self.net_d(self.output)
        l_g_real = gan_loss(real_d_pred - torch.mean(fake_g_pred), False)
        l_g_fake = gan_loss(fake_g_pred - torch.mean(real_d_pred), True)
        l_g = l_pix + self.cfg["gan_weight"] * (l_g_real + l_g_fake) / 2
        l_g.backward()
        self.opt_g.step()

        # ---- discriminator (real and fake backwarded separately, BasicSR style) ----
        for p in self.net_d.parameters():
            p.requires_grad = True
        self.opt_d.zero_grad()
        fake_d_pred = self.net_d(self.output.detach()).detach()
        real_d_pred = self.net_d(gt)
        l_d_real = gan_loss(real_d_pred - torch.mean(fake_d_pred), True) * 0.5
        l_d_real.backward()
        fake_d_pred = self.net_d(self.output.detach())
        l_d_fake = gan_loss(fake_d_pred - torch.mean(real_d_pred.detach()), False) * 0.5
        l_d_fake.backward()
        self.opt_d.step()
        return l_pix.item(), l_g.item(), (l_d_real + l_d_fake).item()

    def fit(self, lq_all, gt_all):
        b = self.cfg["batch"]
        for it in range(self.cfg["iters"]):
            i = (it * b) % len(lq_all)
            stats = self.train_step(lq_all[i:i + b], gt_all[i:i + b])
            for cb in self.callbacks:
                cb.on_train_batch_end(self)
            self.log.append(stats)
            print(f"iter {it} l_pix {stats[0]:.6f} l_g {stats[1]:.6f} l_d {stats[2]:.6f}")


def main():
    torch.manual_seed(CFG["seed"])
    gt = torch.rand(16, 3, 16, 16)
    lq = F.avg_pool2d(gt, 2)
    trainer = ESRGANTrainer(CFG, callbacks=[EMACallback(CFG["ema_decay"])])
    trainer.fit(lq, gt)
    s = lambda m: sum(p.sum() for p in m.parameters()).item()
    print(f"checksum G {s(trainer.net_g):.6f} D {s(trainer.net_d):.6f} G_ema {s(trainer.net_g_ema):.6f}")


if __name__ == "__main__":
    main()
