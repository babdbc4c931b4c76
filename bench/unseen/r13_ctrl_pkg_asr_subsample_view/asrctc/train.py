from pathlib import Path

import torch
import torch.nn.functional as F
import yaml

from .features import spec_augment_, synth_batch
from .model import CTCModel


def greedy_token_error(log_probs, lens, labels, label_lens):
    hyp = log_probs.argmax(-1)
    errs, total = 0, 0
    for b in range(hyp.shape[0]):
        seq = torch.unique_consecutive(hyp[b, :lens[b]])
        seq = seq[seq != 0].tolist()
        ref = labels[b, :label_lens[b]].tolist()
        errs += sum(1 for i in range(max(len(seq), len(ref)))
                    if i >= len(seq) or i >= len(ref) or seq[i] != ref[i])
        total += len(ref)
    return errs / total


def main():
    cfg = yaml.safe_load((Path(__file__).resolve().parent / "config.yaml").read_text())
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    model = CTCModel(cfg["n_mels"], cfg["n_tokens"], cfg["d_model"], cfg["n_heads"], cfg["n_layers"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    for step in range(1, cfg["steps"] + 1):
        feats, feat_lens, labels, label_lens = synth_batch(
            cfg["batch_size"], cfg["n_tokens"], cfg["n_mels"], cfg["frames_per_token"], gen)
        spec_augment_(feats, cfg["spec_augment"]["freq_mask"], cfg["spec_augment"]["time_mask"], gen)
        log_probs, out_lens = model(feats, feat_lens)
        targets = torch.cat([labels[b, :label_lens[b]] for b in range(labels.shape[0])])
        loss = F.ctc_loss(log_probs.transpose(0, 1), targets, out_lens, label_lens, zero_infinity=True)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 0:
            print(f"step {step:3d}  ctc {loss.item():.4f}  "
                  f"token err {greedy_token_error(log_probs.detach(), out_lens, labels, label_lens):.4f}")
    print(f"param checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
