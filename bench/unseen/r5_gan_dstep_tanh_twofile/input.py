# GAN that learns to draw a family of sine curves ("artist works"), after the
# classic 406_GAN tutorial. Run: python input.py
import torch

from models import Discriminator, Generator

torch.manual_seed(0)

BATCH_SIZE = 32
LR_G = 1e-3
LR_D = 1e-3
N_IDEAS = 5
ART_COMPONENTS = 15
STEPS = 120
PAINT_POINTS = torch.linspace(-1, 1, ART_COMPONENTS).repeat(BATCH_SIZE, 1)


def artist_works():
    a = torch.rand(BATCH_SIZE, 1) * 0.5 + 1.0  # amplitude in [1, 1.5]
    return a * torch.sin(PAINT_POINTS * torch.pi)


G = Generator(N_IDEAS, ART_COMPONENTS)
D = Discriminator(ART_COMPONENTS)
opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)
opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)

for step in range(STEPS):
    real = artist_works()
    ideas = torch.randn(BATCH_SIZE, N_IDEAS)
    fake = G(ideas)

    prob_real = D(real)
    prob_fake = D(fake)

    D_loss = -torch.mean(torch.log(prob_real) + torch.log(1.0 - prob_fake))
    G_loss = torch.mean(torch.log(1.0 - prob_fake))

    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)  # G_loss still needs the graph of fake
    opt_D.step()

    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()

    if step % 20 == 0 or step == STEPS - 1:
        print(f"step {step:3d}  D_loss {D_loss.item():.6f}  G_loss {G_loss.item():.6f}  "
              f"D(real) {prob_real.mean().item():.6f}")

with torch.no_grad():
    g_sum = sum(p.double().sum() for p in G.parameters()).item()
    d_sum = sum(p.double().sum() for p in D.parameters()).item()
print(f"checksum G {g_sum:.6f}  D {d_sum:.6f}")
