"""Binary-code image compression autoencoder (Toderici et al. binarizer + Balle et al. GDN).

The stochastic sign binarizer and GDN's LowerBound come from older public code that was
written against the pre-1.3 autograd.Function API.
"""
import argparse
import json
import math
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function


class SignFunction(Function):
    """Variable Rate Image Compression with Recurrent Neural Networks (arXiv:1511.06085).

    Training: b = +1 with probability (1 + x) / 2, else -1 (unbiased quantization noise).
    Test: b = sign(x).  Backward: straight-through.
    """

    def __init__(self, is_training=True):
        super().__init__()
        self.is_training = is_training

    def forward(self, input):
        if self.is_training:
            prob = input.new(input.size()).uniform_()
            x = input.clone()
            x[(1 - input) / 2 <= prob] = 1
            x[(1 - input) / 2 > prob] = -1
            return x
        return input.sign()

    def backward(self, grad_output):
        return grad_output


class LowerBound(Function):
    """max(inputs, bound) whose gradient still flows when it pushes the input upwards."""

    @staticmethod
    def forward(ctx, inputs, bound):
        b = torch.ones_like(inputs) * bound
        ctx.save_for_backward(inputs, b)
        return torch.max(inputs, b)

    @staticmethod
    def backward(ctx, grad_output):
        inputs, b = ctx.saved_tensors
        pass_through_1 = inputs >= b
        pass_through_2 = grad_output < 0
        pass_through = pass_through_1 | pass_through_2
        return pass_through.type(grad_output.dtype) * grad_output


class GDN(nn.Module):
    """Generalized divisive normalization (Balle et al. 2016), with the usual reparametrization."""

    def __init__(self, ch, inverse=False, beta_min=1e-6, gamma_init=0.1, reparam_offset=2 ** -18):
        super().__init__()
        self.inverse = inverse
        self.pedestal = reparam_offset ** 2
        self.beta_bound = (beta_min + self.pedestal) ** 0.5
        self.gamma_bound = reparam_offset
        self.beta = nn.Parameter(torch.sqrt(torch.ones(ch) + self.pedestal))
        self.gamma = nn.Parameter(torch.sqrt(gamma_init * torch.eye(ch) + self.pedestal))

    def forward(self, x):
        ch = x.size(1)
        beta = LowerBound.apply(self.beta, self.beta_bound) ** 2 - self.pedestal
        gamma = LowerBound.apply(self.gamma, self.gamma_bound) ** 2 - self.pedestal
        norm = torch.sqrt(F.conv2d(x ** 2, gamma.view(ch, ch, 1, 1), beta))
        return x * norm if self.inverse else x / norm


class Binarizer(nn.Module):
    def __init__(self, in_ch, code_ch):
        super().__init__()
        self.proj = nn.Conv2d(in_ch, code_ch, 1, bias=False)

    def forward(self, x):
        x = torch.tanh(self.proj(x))
        return SignFunction(self.training)(x)


class CompressionAE(nn.Module):
    def __init__(self, ch, code_ch):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, ch, 3, 2, 1), GDN(ch), nn.Conv2d(ch, ch, 3, 2, 1), GDN(ch))
        self.binarizer = Binarizer(ch, code_ch)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(code_ch, ch, 4, 2, 1), GDN(ch, inverse=True),
            nn.ConvTranspose2d(ch, ch, 4, 2, 1), GDN(ch, inverse=True),
            nn.Conv2d(ch, 1, 3, 1, 1),
        )

    def forward(self, x):
        codes = self.binarizer(self.enc(x))
        return torch.sigmoid(self.dec(codes)), codes


def make_images(n, size, seed):
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    imgs = torch.zeros(n, 1, size, size)
    for i in range(n):
        img = torch.zeros(size, size)
        for _ in range(3):
            cx, cy, s = torch.rand(3, generator=g)
            amp = torch.rand((), generator=g) * 0.8 + 0.2
            img += amp * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (0.01 + 0.05 * s))
        theta = torch.rand((), generator=g) * math.pi
        img += 0.25 * (torch.sin(12 * (xx * torch.cos(theta) + yy * torch.sin(theta))) > 0).float()
        imgs[i, 0] = img / img.max()
    return imgs


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg["seed"])
        self.model = CompressionAE(cfg["channels"], cfg["code_channels"])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg["lr"])
        self.train_x = make_images(cfg["n_train"], cfg["image_size"], cfg["seed"] + 1)
        self.test_x = make_images(cfg["n_test"], cfg["image_size"], cfg["seed"] + 2)

    def train_step(self, x):
        self.model.train()
        self.optimizer.zero_grad()
        recon, _ = self.model(x)
        loss = F.mse_loss(recon, x)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        recon, codes = self.model(self.test_x)
        mse = F.mse_loss(recon, self.test_x).item()
        bpp = codes[0].numel() / self.test_x[0].numel()
        return mse, 10 * math.log10(1.0 / mse), bpp

    def fit(self):
        bs = self.cfg["batch_size"]
        for epoch in range(1, self.cfg["epochs"] + 1):
            perm = torch.randperm(self.train_x.size(0))
            losses = [self.train_step(self.train_x[perm[i:i + bs]]) for i in range(0, perm.numel(), bs)]
            mse, psnr, bpp = self.evaluate()
            print(f"epoch {epoch} train_mse {sum(losses) / len(losses):.5f} "
                  f"test_mse {mse:.5f} psnr {psnr:.3f} dB @ {bpp:.3f} bpp")
        gdn = self.model.enc[1]
        print(f"enc GDN beta mean {gdn.beta.mean().item():.5f} gamma offdiag max {(gdn.gamma - torch.diag(torch.diag(gdn.gamma))).max().item():.6f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default=str(Path(__file__).with_name("compress.json")))
    args = p.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    Trainer(cfg).fit()


if __name__ == "__main__":
    main()
