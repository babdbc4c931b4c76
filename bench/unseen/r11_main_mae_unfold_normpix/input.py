"""A tiny masked autoencoder (MAE, He et al. 2021) with the normalised-pixel target (norm_pix_loss)
on synthetic 16x16 images; patches are taken with Tensor.unfold."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def synthetic_images(n, g):
    """Oriented stripes with random phase/frequency plus a bright square."""
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    theta = torch.rand(n, 1, 1, generator=g) * 3.1416
    freq = 0.3 + 0.5 * torch.rand(n, 1, 1, generator=g)
    phase = 6.28 * torch.rand(n, 1, 1, generator=g)
    img = torch.sin(freq * (xx * torch.cos(theta) + yy * torch.sin(theta)) + phase)
    cx = torch.randint(0, 12, (n,), generator=g)
    cy = torch.randint(0, 12, (n,), generator=g)
    for i in range(n):
        img[i, cy[i]:cy[i] + 4, cx[i]:cx[i] + 4] += 1.5
    return (img + 0.1 * torch.randn(n, 16, 16, generator=g)).unsqueeze(1)


class TinyMAE(nn.Module):
    def __init__(self, patch=4, dim=48, dec_dim=32, img=16):
        super().__init__()
        self.patch = patch
        self.num_patches = (img // patch) ** 2
        self.patch_embed = nn.Conv2d(1, dim, patch, stride=patch)
        self.pos = nn.Parameter(0.02 * torch.randn(1, self.num_patches, dim))
        self.encoder = nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True)
        self.dec_embed = nn.Linear(dim, dec_dim)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, dec_dim))
        self.dec_pos = nn.Parameter(0.02 * torch.randn(1, self.num_patches, dec_dim))
        self.decoder = nn.TransformerEncoderLayer(dec_dim, 4, 2 * dec_dim, dropout=0.0, batch_first=True)
        self.pred = nn.Linear(dec_dim, patch * patch)

    def forward(self, imgs, mask_ratio, g):
        x = self.patch_embed(imgs).flatten(2).transpose(1, 2) + self.pos       # (B, L, D)
        B, L, D = x.shape
        keep = int(L * (1 - mask_ratio))
        noise = torch.rand(B, L, generator=g)
        ids_shuffle = noise.argsort(dim=1)
        ids_restore = ids_shuffle.argsort(dim=1)
        ids_keep = ids_shuffle[:, :keep]
        x = torch.gather(x, 1, ids_keep.unsqueeze(-1).expand(-1, -1, D))
        x = self.encoder(x)
        x = self.dec_embed(x)
        x = torch.cat([x, self.mask_token.expand(B, L - keep, -1)], dim=1)
        x = torch.gather(x, 1, ids_restore.unsqueeze(-1).expand(-1, -1, x.shape[-1])) + self.dec_pos
        pred = self.pred(self.decoder(x))                                      # (B, L, p*p)
        mask = torch.ones(B, L)
        mask[:, :keep] = 0
        mask = torch.gather(mask, 1, ids_restore)
        return pred, mask


def patchify_target(imgs, p, norm_pix):
    """(B, 1, H, W) -> (B, L, p*p), optionally normalised per patch (MAE's norm_pix_loss)."""
    patches = imgs.unfold(2, p, p).unfold(3, p, p)          # (B, 1, H/p, W/p, p, p)
    if norm_pix:
        mean = patches.mean(dim=(-1, -2), keepdim=True)
        var = patches.var(dim=(-1, -2), keepdim=True)
        patches.sub_(mean).div_((var + 1e-6) ** 0.5)
    B = imgs.shape[0]
    return patches.permute(0, 2, 3, 1, 4, 5).reshape(B, -1, p * p)


def masked_mse(pred, target, mask):
    loss = ((pred - target) ** 2).mean(dim=-1)
    return (loss * mask).sum() / mask.sum()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--mask-ratio", type=float, default=0.75)
    parser.add_argument("--norm-pix-loss", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    train = synthetic_images(512, g)
    val = synthetic_images(128, g)
    model = TinyMAE()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    mask_gen = torch.Generator().manual_seed(args.seed + 1)

    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(train), generator=g)
        total = 0.0
        for i in range(0, len(train), args.batch_size):
            imgs = train[perm[i:i + args.batch_size]]
            pred, mask = model(imgs, args.mask_ratio, mask_gen)
            target = patchify_target(imgs, model.patch, args.norm_pix_loss)
            loss = masked_mse(pred, target, mask)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item() * len(imgs)
        model.eval()
        with torch.no_grad():
            vimgs = val
            vpred, vmask = model(vimgs, args.mask_ratio, torch.Generator().manual_seed(123))
            vloss = masked_mse(vpred, patchify_target(vimgs, model.patch, args.norm_pix_loss), vmask)
        print(f"epoch {epoch} train loss {total / len(train):.5f} val loss {vloss.item():.5f}")

    print(f"train images checksum {train.double().abs().sum().item():.4f}")
    print(f"patch_embed checksum {model.patch_embed.weight.detach().double().abs().sum().item():.5f}")


if __name__ == "__main__":
    main()
