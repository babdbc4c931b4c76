"""GAN on a ring of 8 gaussians with PyTorch Lightning (manual optimization).
Run: python input.py"""
import warnings

import torch
import lightning.pytorch as pl

from data import make_loader, ring_of_gaussians
from gan_module import RingGAN

warnings.filterwarnings("ignore")


def main():
    pl.seed_everything(0, verbose=False)
    model = RingGAN()
    trainer = pl.Trainer(
        max_epochs=4,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, train_dataloaders=make_loader())
    for epoch, (g, d) in enumerate(model.history):
        print(f"epoch {epoch} g_loss {g:.4f} d_loss {d:.4f}")
    with torch.no_grad():
        torch.manual_seed(123)
        samples = model(torch.randn(1000, model.hparams.latent_dim))
        radius = samples.norm(dim=1)
    target = ring_of_gaussians(1000, seed=5).norm(dim=1)
    print(f"sample radius mean {radius.mean():.4f} std {radius.std():.4f} (target {target.mean():.4f})")
    print(f"checksum G {sum(p.abs().sum() for p in model.generator.parameters()):.4f} "
          f"D {sum(p.abs().sum() for p in model.discriminator.parameters()):.4f}")


if __name__ == "__main__":
    main()
