"""python -m pwglite.train"""
import torch

from .data import make_dataset
from .hparams import load_config
from .model import Generator
from .stft_loss import MultiResolutionSTFTLoss


def main():
    cfg = load_config()
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    (mel_tr, wav_tr), (mel_va, wav_va) = make_dataset(cfg, gen)

    model = Generator(cfg["n_mels"], cfg["channels"])
    criterion = MultiResolutionSTFTLoss(**cfg["stft_loss"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"], betas=(0.5, 0.9))
    bs = cfg["batch_size"]
    for epoch in range(cfg["epochs"]):
        model.train()
        perm = torch.randperm(mel_tr.size(0), generator=gen)
        sc_tot = mag_tot = 0.0
        n = 0
        for i in range(0, mel_tr.size(0), bs):
            idx = perm[i:i + bs]
            y_hat = model(mel_tr[idx])
            sc_loss, mag_loss = criterion(y_hat, wav_tr[idx])
            loss = sc_loss + mag_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            sc_tot += sc_loss.item()
            mag_tot += mag_loss.item()
            n += 1
        model.eval()
        with torch.no_grad():
            v_sc, v_mag = criterion(model(mel_va), wav_va)
        print(f"epoch {epoch} sc_loss {sc_tot / n:.6f} mag_loss {mag_tot / n:.6f} "
              f"val_sc {v_sc.item():.6f} val_mag {v_mag.item():.6f}")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.6f}")


if __name__ == "__main__":
    main()
