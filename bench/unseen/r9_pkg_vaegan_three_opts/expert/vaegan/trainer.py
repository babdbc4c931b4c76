import torch

from .losses import feature_reconstruction, gan_losses, kl_divergence


class VAEGANTrainer:
    def __init__(self, model, lr=1e-3, gamma=0.5):
        self.model = model
        self.gamma = gamma
        betas = (0.5, 0.999)
        self.opt_enc = torch.optim.Adam(model.encoder.parameters(), lr=lr, betas=betas)
        self.opt_dec = torch.optim.Adam(model.decoder.parameters(), lr=lr, betas=betas)
        self.opt_dis = torch.optim.Adam(model.discriminator.parameters(), lr=lr, betas=betas)

    def train_step(self, x):
        m = self.model
        m.train()
        x_recon, mu, logvar = m(x)
        x_prior = m.decoder(torch.randn(x.size(0), m.z_dim))

        d_real, f_real = m.discriminator(x)
        d_recon, f_recon = m.discriminator(x_recon)
        d_prior, _ = m.discriminator(x_prior)

        kl = kl_divergence(mu, logvar)
        llike = feature_reconstruction(f_recon, f_real)
        gan = gan_losses(d_real, d_recon, d_prior)

        loss_enc = kl + llike
        loss_dec = self.gamma * llike - gan
        loss_dis = gan

        # all three gradients at the same point, each loss only into its own module, then step
        self.opt_enc.zero_grad()
        self.opt_dec.zero_grad()
        self.opt_dis.zero_grad()
        loss_enc.backward(retain_graph=True, inputs=list(m.encoder.parameters()))
        loss_dec.backward(retain_graph=True, inputs=list(m.decoder.parameters()))
        loss_dis.backward(inputs=list(m.discriminator.parameters()))
        self.opt_enc.step()
        self.opt_dec.step()
        self.opt_dis.step()
        return kl.item(), llike.item(), gan.item()

    @torch.no_grad()
    def evaluate(self, x):
        self.model.eval()
        x_recon, mu, _ = self.model(x)
        return (x_recon - x).pow(2).mean().item(), mu.pow(2).mean().item()

    def fit(self, train, val, epochs, batch_size, gen):
        for epoch in range(epochs):
            perm = torch.randperm(train.size(0), generator=gen)
            stats = torch.zeros(3)
            nb = 0
            for i in range(0, train.size(0), batch_size):
                stats += torch.tensor(self.train_step(train[perm[i:i + batch_size]]))
                nb += 1
            kl, llike, gan = (stats / nb).tolist()
            mse, mu2 = self.evaluate(val)
            print(f"epoch {epoch} kl {kl:.5f} llike {llike:.5f} gan {gan:.5f} | val mse {mse:.5f} mu^2 {mu2:.5f}")
