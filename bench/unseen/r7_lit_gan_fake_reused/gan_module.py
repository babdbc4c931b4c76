import torch
import torch.nn.functional as F
import lightning.pytorch as pl

from nets import Discriminator, Generator


class RingGAN(pl.LightningModule):
    """Two optimizers, so manual optimization (Lightning 2.x)."""

    def __init__(self, latent_dim=8, hidden=64, lr=2e-3, b1=0.5, b2=0.999):
        super().__init__()
        self.save_hyperparameters()
        self.automatic_optimization = False
        self.generator = Generator(latent_dim, hidden)
        self.discriminator = Discriminator(hidden=hidden)
        self.history = []
        self._g, self._d = [], []

    def forward(self, z):
        return self.generator(z)

    def training_step(self, batch, batch_idx):
        (real,) = batch
        opt_g, opt_d = self.optimizers()
        n = real.size(0)
        ones = torch.ones(n, 1, device=self.device)
        zeros = torch.zeros(n, 1, device=self.device)

        z = torch.randn(n, self.hparams.latent_dim, device=self.device)
        fake = self(z)

        # ---- generator: make D call the fakes real
        self.toggle_optimizer(opt_g)
        g_loss = F.binary_cross_entropy_with_logits(self.discriminator(fake), ones)
        self.manual_backward(g_loss)
        opt_g.step()
        opt_g.zero_grad()
        self.untoggle_optimizer(opt_g)

        # ---- discriminator: real vs the same fakes
        self.toggle_optimizer(opt_d)
        real_loss = F.binary_cross_entropy_with_logits(self.discriminator(real), ones)
        fake_loss = F.binary_cross_entropy_with_logits(self.discriminator(fake), zeros)
        d_loss = 0.5 * (real_loss + fake_loss)
        self.manual_backward(d_loss)
        opt_d.step()
        opt_d.zero_grad()
        self.untoggle_optimizer(opt_d)

        self._g.append(g_loss.item())
        self._d.append(d_loss.item())

    def on_train_epoch_end(self):
        self.history.append((sum(self._g) / len(self._g), sum(self._d) / len(self._d)))
        self._g, self._d = [], []

    def configure_optimizers(self):
        b = (self.hparams.b1, self.hparams.b2)
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=self.hparams.lr, betas=b)
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=self.hparams.lr, betas=b)
        return [opt_g, opt_d]
