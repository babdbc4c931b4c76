"""Train a small GAN on an 8-Gaussian ring with the Lightning-style module in lit_gan.py
and the loop in engine.py. Run: python input.py"""
import torch

from engine import MiniTrainer
from lit_gan import LitGAN, ring_modes


def main():
    torch.manual_seed(0)
    modes = ring_modes()
    n, batch_size = 1024, 64
    data = modes[torch.randint(0, len(modes), (n,))] + 0.05 * torch.randn(n, 2)
    loader = [data[i:i + batch_size] for i in range(0, n, batch_size)]

    model = LitGAN()

    def log(epoch, means):
        d_loss, g_loss = means
        print(f"epoch {epoch} d_loss {d_loss:.4f} g_loss {g_loss:.4f} "
              f"mode dist {model.mode_distance(modes):.4f}")

    MiniTrainer(max_epochs=6).fit(model, loader, on_epoch_end=log)
    print(f"checksum G {sum(p.sum().item() for p in model.generator.parameters()):.4f} "
          f"D {sum(p.sum().item() for p in model.discriminator.parameters()):.4f}")


if __name__ == "__main__":
    main()
