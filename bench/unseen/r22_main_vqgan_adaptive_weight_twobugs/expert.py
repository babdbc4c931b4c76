"""Tiny VQGAN stage-1 trainer (taming-transformers style), CPU toy version."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Quantizer(nn.Module):
    def __init__(self, n_e, e_dim, beta=0.25):
        super().__init__()
        self.embedding = nn.Embedding(n_e, e_dim)
        self.embedding.weight.data.uniform_(-1.0 / n_e, 1.0 / n_e)
        self.beta = beta

    def forward(self, z):
        zf = z.permute(0, 2, 3, 1).reshape(-1, z.shape[1])
        d = (zf.pow(2).sum(1, keepdim=True) - 2 * zf @ self.embedding.weight.t()
             + self.embedding.weight.pow(2).sum(1))
        idx = d.argmin(1)
        zq = self.embedding(idx).view(z.shape[0], z.shape[2], z.shape[3], -1).permute(0, 3, 1, 2)
        loss = self.beta * (zq.detach() - z).pow(2).mean() + (zq - z.detach()).pow(2).mean()
        zq = z + (zq - z).detach()
        return zq, loss


class Decoder(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv_in = nn.Conv2d(4, ch, 3, padding=1)
        self.up = nn.ConvTranspose2d(ch, ch, 4, stride=2, padding=1)
        self.conv_out = nn.Conv2d(ch, 1, 3, padding=1)

    def forward(self, z):
        h = F.silu(self.conv_in(z))
        h = F.silu(self.up(h))
        return self.conv_out(h)


class VQModel(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, ch, 4, stride=2, padding=1), nn.SiLU(),
                                     nn.Conv2d(ch, 4, 3, padding=1))
        self.quantize = Quantizer(16, 4)
        self.decoder = Decoder(ch)

    def forward(self, x):
        zq, qloss = self.quantize(self.encoder(x))
        return self.decoder(zq), qloss

    def get_last_layer(self):
        return self.decoder.conv_out.weight


class PatchDisc(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, ch, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(ch, 1, 3, padding=1))

    def forward(self, x):
        return self.net(x)


def hinge_d_loss(logits_real, logits_fake):
    return 0.5 * (F.relu(1.0 - logits_real).mean() + F.relu(1.0 + logits_fake).mean())


class VQLossWithDiscriminator(nn.Module):
    def __init__(self, disc_start, disc_weight=0.8, codebook_weight=1.0):
        super().__init__()
        self.discriminator = PatchDisc()
        self.disc_start = disc_start
        self.discriminator_weight = disc_weight
        self.codebook_weight = codebook_weight

    def calculate_adaptive_weight(self, nll_loss, g_loss, last_layer):
        nll_grads = torch.autograd.grad(nll_loss, last_layer, retain_graph=True)[0]
        g_grads = torch.autograd.grad(g_loss, last_layer, retain_graph=True)[0]
        d_weight = torch.norm(nll_grads) / (torch.norm(g_grads) + 1e-4)
        d_weight = torch.clamp(d_weight, 0.0, 1e4)
        return d_weight * self.discriminator_weight

    def forward(self, codebook_loss, inputs, reconstructions, optimizer_idx, global_step, last_layer):
        disc_factor = 1.0 if global_step >= self.disc_start else 0.0
        if optimizer_idx == 0:
            rec_loss = (inputs - reconstructions).abs()
            nll_loss = rec_loss.mean()
            logits_fake = self.discriminator(reconstructions)
            g_loss = -logits_fake.mean()
            d_weight = self.calculate_adaptive_weight(nll_loss, g_loss, last_layer)
            loss = nll_loss + d_weight * disc_factor * g_loss + self.codebook_weight * codebook_loss
            return loss, d_weight
        logits_real = self.discriminator(inputs)
        logits_fake = self.discriminator(reconstructions.contiguous().detach())
        return disc_factor * hinge_d_loss(logits_real, logits_fake), None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--disc-start", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(0)
    data = torch.rand(32, 1, 8, 8)
    model = VQModel()
    loss_fn = VQLossWithDiscriminator(args.disc_start)
    opt_ae = torch.optim.Adam(list(model.parameters()), lr=args.lr, betas=(0.5, 0.9))
    opt_disc = torch.optim.Adam(loss_fn.discriminator.parameters(), lr=args.lr, betas=(0.5, 0.9))

    for step in range(args.steps):
        x = data[(step * args.batch) % 32:(step * args.batch) % 32 + args.batch]
        xrec, qloss = model(x)

        opt_ae.zero_grad()
        aeloss, d_weight = loss_fn(qloss, x, xrec, 0, step, last_layer=model.get_last_layer())
        aeloss.backward()
        opt_ae.step()

        opt_disc.zero_grad()
        discloss, _ = loss_fn(qloss, x, xrec, 1, step, last_layer=model.get_last_layer())
        discloss.backward()
        opt_disc.step()
        print(f"step {step} aeloss {aeloss.item():.6f} d_weight {d_weight.item():.6f} discloss {discloss.item():.6f}")

    total = sum(p.sum() for p in model.parameters()).item()
    dtotal = sum(p.sum() for p in loss_fn.discriminator.parameters()).item()
    print(f"checksum model {total:.6f} disc {dtotal:.6f}")


if __name__ == "__main__":
    main()
