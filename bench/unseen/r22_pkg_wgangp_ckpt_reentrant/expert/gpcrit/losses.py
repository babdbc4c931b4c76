import torch


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interp = critic(interp)
    grads = torch.autograd.grad(outputs=d_interp, inputs=interp,
                                grad_outputs=torch.ones_like(d_interp),
                                create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def critic_loss(critic, real, fake, gp_weight):
    wdist = critic(fake).mean() - critic(real).mean()
    return wdist + gp_weight * gradient_penalty(critic, real, fake), wdist


def generator_loss(critic, fake):
    return -critic(fake).mean()
