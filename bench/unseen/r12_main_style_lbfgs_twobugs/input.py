"""Gatys-style neural style transfer with L-BFGS, structured like the PyTorch tutorial
(ContentLoss / StyleLoss modules inserted after chosen conv layers, ``optimizer.step(closure)``).

No pretrained VGG is available offline, so the feature extractor is a small conv net with
fixed random weights (random features still give usable Gram-matrix texture statistics).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_images(size, seed):
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    # content: a bright disc and a dark square on a gradient background
    content = torch.stack([0.5 + 0.3 * xx, 0.4 + 0.2 * yy, 0.5 - 0.2 * xx], 0)
    disc = ((xx + 0.3) ** 2 + (yy + 0.2) ** 2 < 0.15).float()
    square = ((xx - 0.4).abs() < 0.25).float() * ((yy - 0.35).abs() < 0.25).float()
    content = content * (1 - disc) + disc * torch.tensor([0.9, 0.8, 0.2]).view(3, 1, 1)
    content = content * (1 - square) + square * torch.tensor([0.1, 0.2, 0.5]).view(3, 1, 1)
    # style: diagonal colour stripes with a little noise
    phase = 6.0 * (xx + yy)
    style = torch.stack([0.5 + 0.45 * torch.sin(phase), 0.5 + 0.45 * torch.sin(phase + 2.0),
                         0.5 + 0.45 * torch.sin(phase + 4.0)], 0)
    style = (style + 0.05 * torch.randn(3, size, size, generator=g)).clamp(0, 1)
    return content.unsqueeze(0).clamp(0, 1), style.unsqueeze(0)


def gram_matrix(x):
    b, c, h, w = x.shape
    f = x.view(b * c, h * w)
    return f @ f.t() / (b * c * h * w)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target
        self.loss = torch.zeros(())

    def forward(self, x):
        self.loss = F.mse_loss(x, self.target)
        return x


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature)
        self.loss = torch.zeros(())

    def forward(self, x):
        self.loss = F.mse_loss(gram_matrix(x), self.target)
        return x


class Normalization(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1))

    def forward(self, img):
        return (img - self.mean) / self.std


def make_features(seed):
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
        nn.AvgPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
    ).eval()


def get_style_model_and_losses(cnn, style_img, content_img,
                               content_layers=("conv_4",),
                               style_layers=("conv_1", "conv_2", "conv_3", "conv_4")):
    model = nn.Sequential(Normalization())
    content_losses, style_losses = [], []
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"
            layer = nn.ReLU(inplace=False)
        else:
            name = f"pool_{i}"
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img)
            cl = ContentLoss(target)
            model.add_module(f"content_loss_{i}", cl)
            content_losses.append(cl)
        if name in style_layers:
            target_feature = model(style_img)
            sl = StyleLoss(target_feature)
            model.add_module(f"style_loss_{i}", sl)
            style_losses.append(sl)
    return model, style_losses, content_losses


def run_style_transfer(cnn, content_img, style_img, input_img, num_steps, style_weight, content_weight):
    model, style_losses, content_losses = get_style_model_and_losses(cnn, style_img, content_img)
    input_img.requires_grad_(True)
    model.eval()
    optimizer = torch.optim.LBFGS([input_img])

    run = [0]
    while run[0] <= num_steps:
        def closure():
            # keep the image in the valid range
            input_img.clamp_(0, 1)

            optimizer.zero_grad()
            model(input_img)
            style_score = sum(sl.loss for sl in style_losses) * style_weight
            content_score = sum(cl.loss for cl in content_losses) * content_weight
            loss = style_score + content_score
            loss.backward()

            run[0] += 1
            if run[0] % 20 == 0:
                print(f"run {run[0]:3d}: style {style_score.item():.5f} content {content_score.item():.5f}")
            return loss

        optimizer.step(closure)

    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img


def main():
    p = argparse.ArgumentParser(description="tiny neural style transfer")
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--style-weight", type=float, default=1e3)
    p.add_argument("--content-weight", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    content_img, style_img = make_images(args.size, args.seed)
    cnn = make_features(args.seed)
    input_img = content_img.clone()
    out = run_style_transfer(cnn, content_img, style_img, input_img, args.steps,
                             args.style_weight, args.content_weight)
    d_content = (out - content_img).abs().mean().item()
    g_out = gram_matrix(cnn[:2](out)).detach()
    g_sty = gram_matrix(cnn[:2](style_img)).detach()
    print(f"image mean {out.mean().item():.5f} std {out.std().item():.5f}")
    print(f"L1 to content {d_content:.5f} gram gap relu_1 {(g_out - g_sty).abs().mean().item():.6f}")


if __name__ == "__main__":
    main()
