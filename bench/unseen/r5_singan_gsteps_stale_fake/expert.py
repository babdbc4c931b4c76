# Single-sample GAN in the style of SinGAN's train_single_scale (1-D signal
# instead of an image): a WGAN-style critic is updated D_STEPS times, then the
# generator G_STEPS times, with an adversarial term and a reconstruction term
# from a fixed noise z_opt. Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

L = 64
NZ = 4
D_STEPS = 3
G_STEPS = 3
ITERS = 30
ALPHA = 10.0

t = torch.linspace(0, 1, L)
real = (torch.sin(2 * torch.pi * 3 * t) + 0.5 * torch.sin(2 * torch.pi * 7 * t + 1.0)).view(1, 1, L)


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv1d(cin, cout, 5, padding=2), nn.BatchNorm1d(cout), nn.LeakyReLU(0.2))


netG = nn.Sequential(conv_block(NZ, 16), conv_block(16, 16), nn.Conv1d(16, 1, 5, padding=2), nn.Tanh())
netD = nn.Sequential(conv_block(1, 16), conv_block(16, 16), nn.Conv1d(16, 1, 5, padding=2))
optimizerD = torch.optim.Adam(netD.parameters(), lr=5e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=5e-4, betas=(0.5, 0.999))
z_opt = torch.randn(1, NZ, L)

for it in range(ITERS):
    ############################
    # (1) Update D: maximize D(x) - D(G(z))
    ############################
    for j in range(D_STEPS):
        netD.zero_grad()
        output = netD(real)
        errD_real = -output.mean()
        errD_real.backward(retain_graph=True)

        noise = torch.randn(1, NZ, L)
        fake = netG(noise)
        output = netD(fake.detach())
        errD_fake = output.mean()
        errD_fake.backward(retain_graph=True)
        optimizerD.step()

    ############################
    # (2) Update G: maximize D(G(z)) + reconstruction
    ############################
    for j in range(G_STEPS):
        netG.zero_grad()
        fake = netG(noise)  # regenerate with the current G weights
        output = netD(fake)
        errG = -output.mean()
        errG.backward(retain_graph=True)
        rec_loss = ALPHA * F.mse_loss(netG(z_opt), real)
        rec_loss.backward(retain_graph=True)
        optimizerG.step()

    if it % 5 == 0 or it == ITERS - 1:
        print(f"iter {it:2d} errD {(errD_real + errD_fake).item():.6f} errG {errG.item():.6f} rec {rec_loss.item():.6f}")

print(f"checksum G {sum(p.double().sum() for p in netG.parameters()).item():.6f} "
      f"D {sum(p.double().sum() for p in netD.parameters()).item():.6f}")
