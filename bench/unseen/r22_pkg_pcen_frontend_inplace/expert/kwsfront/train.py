from pathlib import Path

import torch
import torch.nn.functional as F
import yaml

from .model import KWSNet


def make_tones(cfg, gen):
    n, L = cfg["n_per_class"], cfg["wav_len"]
    t = torch.arange(L).float()
    wavs, labels = [], []
    for c in range(cfg["n_classes"]):
        freq = 0.05 + 0.08 * c
        gain = 10 ** (torch.rand(n, 1, generator=gen) * 2 - 1)  # loudness varies over 2 decades
        phase = 2 * torch.pi * torch.rand(n, 1, generator=gen)
        wavs.append(gain * torch.sin(2 * torch.pi * freq * t + phase) + 0.1 * torch.randn(n, L, generator=gen))
        labels.append(torch.full((n,), c))
    return torch.cat(wavs), torch.cat(labels)


def main():
    cfg = yaml.safe_load((Path(__file__).parent / "config.yaml").read_text())
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    wav, y = make_tones(cfg, gen)
    model = KWSNet(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    step = 0
    for epoch in range(cfg["epochs"]):
        perm = torch.randperm(len(y), generator=gen)
        for i in range(0, len(y), cfg["batch"]):
            idx = perm[i:i + cfg["batch"]]
            loss = F.cross_entropy(model(wav[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 3 == 0:
                print(f"step {step} loss {loss.item():.6f}")
            step += 1
    pc = model.frontend.pcen
    print(f"pcen alpha {pc.alpha.mean().item():.6f} smooth {pc.smooth.mean().item():.6f}")
    total = sum(p.sum() for p in model.parameters()).item()
    print(f"checksum {total:.6f}")


if __name__ == "__main__":
    main()
