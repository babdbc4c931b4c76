import torch


def critic_step(accelerator, G, D, opt_d, real, latent_dim, clip_value):
    z = torch.randn(real.size(0), latent_dim, device=real.device)
    with torch.no_grad():
        fake = G(z)
    loss_d = D(fake).mean() - D(real).mean()
    opt_d.zero_grad()
    accelerator.backward(loss_d)
    opt_d.step()
    # WGAN: keep the critic K-Lipschitz by clipping its weights
    for p in D.parameters():
        p.clamp_(-clip_value, clip_value)
    return -loss_d.item()


def generator_step(accelerator, G, D, opt_g, batch_size, latent_dim, device):
    z = torch.randn(batch_size, latent_dim, device=device)
    loss_g = -D(G(z)).mean()
    opt_g.zero_grad()
    accelerator.backward(loss_g)
    opt_g.step()
    return loss_g.item()
