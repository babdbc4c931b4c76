# 1-D GAN learning a two-mode Gaussian mixture. Both optimizers are zeroed at the top of
# the iteration, then D is trained on G(z) without .detach(), then G is trained on the
# same fake batch. Based on https://github.com/pytorch/examples/issues/116 (a missing
# detach in the DCGAN example gives "Trying to backward through the graph a second time")
# and https://github.com/heykeetae/Self-Attention-GAN/issues/48 (without detach G also
# receives D's gradient).
import torch
import torch.nn as nn

torch.manual_seed(2)

Z = 4
G = nn.Sequential(nn.Linear(Z, 32), nn.ReLU(), nn.Linear(32, 1))
D = nn.Sequential(nn.Linear(1, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_D = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()


def sample_real(n):
    mode = torch.randint(0, 2, (n, 1)).float()
    return torch.randn(n, 1) * 0.3 + (mode * 4 - 2)


for step in range(24):
    real = sample_real(64)
    z = torch.randn(64, Z)
    ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)

    opt_D.zero_grad()
    opt_G.zero_grad()
    fake = G(z)
    loss_D = bce(D(real), ones) + bce(D(fake), zeros)
    loss_D.backward()
    opt_D.step()

    loss_G = bce(D(fake), ones)
    loss_G.backward()
    opt_G.step()
    if step % 3 == 0:
        print(f"step {step} loss_D {loss_D.item():.6f} loss_G {loss_G.item():.6f} "
              f"fake_mean {fake.mean().item():.6f}")
