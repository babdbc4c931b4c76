"""Growing Neural Cellular Automata (Mordvintsev et al., Distill 2020), PyTorch port.

Sample-pool training: a pool of CA states is kept between iterations; each batch
is drawn from the pool, the worst sample is reseeded, the CA is run for a random
number of steps, and the final states are written back into the pool.
"""
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    size: int = 16
    channels: int = 12
    hidden: int = 48
    pool_size: int = 32
    batch: int = 8
    steps_min: int = 8
    steps_max: int = 14
    fire_rate: float = 0.5
    iters: int = 30
    lr: float = 1e-2
    seed: int = 0


def alive_mask(x):
    return F.max_pool2d(x[:, 3:4], kernel_size=3, stride=1, padding=1) > 0.1


class CA(nn.Module):
    def __init__(self, channels, hidden, fire_rate):
        super().__init__()
        ident = torch.tensor([[0., 0., 0.], [0., 1., 0.], [0., 0., 0.]])
        sobel_x = torch.tensor([[-1., 0., 1.], [-2., 0., 2.], [-1., 0., 1.]]) / 8.0
        kernels = torch.stack([ident, sobel_x, sobel_x.t()])            # 3 x 3 x 3
        kernels = kernels.repeat(channels, 1, 1).unsqueeze(1)           # 3C x 1 x 3 x 3
        self.register_buffer("kernels", kernels)
        self.channels = channels
        self.fire_rate = fire_rate
        self.fc1 = nn.Conv2d(3 * channels, hidden, 1)
        self.fc2 = nn.Conv2d(hidden, channels, 1, bias=False)
        nn.init.normal_(self.fc2.weight, std=0.02)

    def perceive(self, x):
        return F.conv2d(x, self.kernels, padding=1, groups=self.channels)

    def forward(self, x, steps, gen):
        for _ in range(steps):
            pre_alive = alive_mask(x)
            dx = self.fc2(F.relu(self.fc1(self.perceive(x))))
            fire = (torch.rand(x.shape[0], 1, x.shape[2], x.shape[3], generator=gen)
                    <= self.fire_rate).float()
            x = x + dx * fire
            post_alive = alive_mask(x)
            x = x * (pre_alive & post_alive).float()
        return x


def make_target(size):
    yy, xx = torch.meshgrid(torch.arange(size, dtype=torch.float32),
                            torch.arange(size, dtype=torch.float32), indexing="ij")
    c = (size - 1) / 2.0
    r = torch.sqrt((yy - c) ** 2 + (xx - c) ** 2)
    alpha = ((r > 2.5) & (r < 5.5)).float()
    rgb = torch.stack([alpha * (xx / size), alpha * (yy / size), alpha * 0.5])
    return torch.cat([rgb, alpha[None]], 0)                              # 4 x H x W


def make_seed(cfg):
    seed = torch.zeros(cfg.channels, cfg.size, cfg.size)
    seed[3:, cfg.size // 2, cfg.size // 2] = 1.0
    return seed


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 1)

    target = make_target(cfg.size)
    seed = make_seed(cfg)
    ca = CA(cfg.channels, cfg.hidden, cfg.fire_rate)
    opt = torch.optim.Adam(ca.parameters(), lr=cfg.lr)
    pool = seed.repeat(cfg.pool_size, 1, 1, 1)

    def per_sample_loss(x):
        return ((x[:, :4] - target) ** 2).mean(dim=(1, 2, 3))

    history = []
    for it in range(cfg.iters):
        idx = torch.randperm(cfg.pool_size, generator=gen)[: cfg.batch]
        x0 = pool[idx]
        with torch.no_grad():
            order = per_sample_loss(x0).argsort(descending=True)
        idx = idx[order]
        x0 = x0[order]
        x0[:1] = seed                      # replace the worst sample with a fresh seed

        steps = int(torch.randint(cfg.steps_min, cfg.steps_max + 1, (1,), generator=gen))
        x = ca(x0, steps, gen)
        loss = per_sample_loss(x).mean()

        opt.zero_grad()
        loss.backward()
        for p in ca.parameters():          # per-parameter gradient normalisation (as in the paper)
            p.grad /= (p.grad.norm() + 1e-8)
        opt.step()

        pool[idx] = x.detach()
        history.append(loss.item())

    with torch.no_grad():
        g_eval = torch.Generator().manual_seed(123)
        grown = ca(seed[None].clone(), 20, g_eval)
        eval_loss = per_sample_loss(grown).item()
    checksum = sum(p.double().abs().sum().item() for p in ca.parameters())
    print("config", asdict(cfg))
    print(f"first_loss {history[0]:.6f}")
    print(f"final_loss {history[-1]:.6f}")
    print(f"mean_last5 {sum(history[-5:]) / 5:.6f}")
    print(f"eval_loss {eval_loss:.6f}")
    print(f"pool_mean {pool.double().mean().item():.6f}")
    print(f"param_checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
