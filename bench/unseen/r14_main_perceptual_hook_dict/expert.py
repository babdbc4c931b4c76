import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml


def smooth_images(n, size, gen):
    """Random smooth 'natural-ish' images: low-frequency noise upsampled, plus a few edges."""
    low = torch.randn(n, 1, 4, 4, generator=gen)
    img = F.interpolate(low, size=(size, size), mode="bilinear", align_corners=False)
    edge = (torch.rand(n, 1, 1, 1, generator=gen) * size).long()
    cols = torch.arange(size).view(1, 1, 1, size)
    img = img + 0.8 * (cols >= edge).float()
    return img


class FeatureExtractor(nn.Module):
    """Frozen conv net; forward hooks collect the activations named in `layers`."""

    def __init__(self, layers, seed=123):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.net = nn.Sequential()
        self.net.add_module("conv1", nn.Conv2d(1, 16, 3, padding=1))
        self.net.add_module("relu1", nn.ReLU())
        self.net.add_module("conv2", nn.Conv2d(16, 16, 3, padding=1))
        self.net.add_module("relu2", nn.ReLU())
        self.net.add_module("pool", nn.AvgPool2d(2))
        self.net.add_module("conv3", nn.Conv2d(16, 32, 3, padding=1))
        self.net.add_module("relu3", nn.ReLU())
        for m in self.net:
            if isinstance(m, nn.Conv2d):
                with torch.no_grad():
                    m.weight.copy_(torch.randn(m.weight.shape, generator=g) * math.sqrt(2.0 / m.weight[0].numel()))
                    m.bias.zero_()
        for p in self.parameters():
            p.requires_grad_(False)
        self.eval()
        self._features = {}
        for name, module in self.net.named_children():
            if name in layers:
                module.register_forward_hook(self._save(name))

    def _save(self, name):
        def hook(module, inputs, output):
            self._features[name] = output
        return hook

    def forward(self, x):
        self._features.clear()
        self.net(x)
        return dict(self._features)


class PerceptualLoss(nn.Module):
    def __init__(self, layer_weights):
        super().__init__()
        self.layer_weights = layer_weights
        self.extractor = FeatureExtractor(list(layer_weights))

    def forward(self, pred, target):
        pred_feats = self.extractor(pred)
        with torch.no_grad():
            target_feats = self.extractor(target)
        return sum(w * F.l1_loss(pred_feats[k], target_feats[k]) for k, w in self.layer_weights.items())


class Denoiser(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(width, 1, 3, padding=1))

    def forward(self, x):
        return x + self.body(x)


def psnr(pred, target):
    mse = F.mse_loss(pred, target).item()
    return 10 * math.log10(4.0 / mse)


def main():
    p = argparse.ArgumentParser(description="Train a denoiser with a perceptual (feature) loss")
    p.add_argument("--config", default="config.yaml")
    args = p.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    gen = torch.Generator().manual_seed(cfg["seed"])
    d = cfg["data"]
    clean = smooth_images(d["n_train"] + d["n_val"], d["size"], gen)
    noisy = clean + d["noise_std"] * torch.randn(clean.shape, generator=gen)
    tr_clean, va_clean = clean[: d["n_train"]], clean[d["n_train"]:]
    tr_noisy, va_noisy = noisy[: d["n_train"]], noisy[d["n_train"]:]

    torch.manual_seed(cfg["seed"])
    model = Denoiser(cfg["model"]["width"])
    perceptual = PerceptualLoss(cfg["loss"]["perceptual_layers"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["train"]["lr"])
    t = cfg["train"]
    print(f"val_psnr before {psnr(va_noisy, va_clean):.4f}")
    for step in range(1, t["steps"] + 1):
        idx = torch.randint(0, d["n_train"], (t["batch_size"],), generator=gen)
        pred = model(tr_noisy[idx])
        loss = 0.0
        if cfg["loss"]["pixel_weight"] > 0:
            loss = loss + cfg["loss"]["pixel_weight"] * F.l1_loss(pred, tr_clean[idx])
        loss = loss + perceptual(pred, tr_clean[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % t["log_every"] == 0:
            with torch.no_grad():
                val = psnr(model(va_noisy), va_clean)
            print(f"step {step} perceptual {loss.item():.4f} val_psnr {val:.4f}")
    print(f"weight_checksum {sum(p.abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
