"""Fine-tune a tiny randomly initialised Wav2Vec2ForCTC on synthetic "tone words".

Every token is rendered as a short tone burst; an utterance is 3-5 tokens.  The
training loop computes the CTC loss itself (so that a blank penalty can be used for
the greedy transcripts that are logged as CER during training).
"""
import argparse

import torch
import torch.nn.functional as F
from transformers import Wav2Vec2Config, Wav2Vec2ForCTC, set_seed

BLANK = 0
N_TOKENS = 6
SEG = 160


def synth_batch(batch_size, generator):
    freqs = torch.linspace(0.03, 0.33, N_TOKENS)
    max_len = 5 * SEG
    wav = torch.zeros(batch_size, max_len)
    mask = torch.zeros(batch_size, max_len, dtype=torch.long)
    labels = torch.zeros(batch_size, 5, dtype=torch.long)
    label_lens = torch.randint(3, 6, (batch_size,), generator=generator)
    t = torch.arange(SEG).float()
    for b in range(batch_size):
        toks = torch.randint(1, N_TOKENS + 1, (int(label_lens[b]),), generator=generator)
        labels[b, :len(toks)] = toks
        for i, tok in enumerate(toks):
            wav[b, i * SEG:(i + 1) * SEG] = torch.sin(2 * torch.pi * freqs[tok - 1] * t)
        mask[b, :len(toks) * SEG] = 1
    wav = wav + 0.1 * torch.randn(wav.shape, generator=generator) * mask
    return wav, mask, labels, label_lens


def greedy_collapse(ids, length):
    out, prev = [], None
    for i in ids[:length].tolist():
        if i != prev and i != BLANK:
            out.append(i)
        prev = i
    return out


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(b) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] != b[j - 1]))
            prev, d[j] = d[j], cur
    return d[-1]


def ctc_step(model, wav, mask, labels, label_lens, blank_penalty):
    logits = model(wav, attention_mask=mask).logits
    log_probs = F.log_softmax(logits, dim=-1)
    in_lens = model._get_feat_extract_output_lengths(mask.sum(-1))
    targets = torch.cat([labels[b, :label_lens[b]] for b in range(labels.shape[0])])
    loss = F.ctc_loss(log_probs.transpose(0, 1), targets, in_lens, label_lens,
                      blank=BLANK, reduction="mean", zero_infinity=True)
    scores = log_probs.detach().clone()
    scores[..., BLANK] -= blank_penalty
    hyp = scores.argmax(-1)
    return loss, hyp, in_lens


def cer(hyp, in_lens, labels, label_lens):
    errs = sum(edit_distance(greedy_collapse(hyp[b], int(in_lens[b])), labels[b, :label_lens[b]].tolist())
               for b in range(hyp.shape[0]))
    return errs / label_lens.sum().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--blank-penalty", type=float, default=0.5)
    args = p.parse_args()

    set_seed(0)
    config = Wav2Vec2Config(
        vocab_size=N_TOKENS + 1, pad_token_id=BLANK, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, conv_dim=(16, 16, 16), conv_kernel=(10, 3, 3),
        conv_stride=(5, 2, 2), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        feat_extract_norm="group", mask_time_prob=0.0, layerdrop=0.0, ctc_loss_reduction="mean")
    model = Wav2Vec2ForCTC(config)
    model.freeze_feature_encoder()
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    gen = torch.Generator().manual_seed(1)

    for step in range(1, args.steps + 1):
        wav, mask, labels, label_lens = synth_batch(args.batch_size, gen)
        loss, hyp, in_lens = ctc_step(model, wav, mask, labels, label_lens, args.blank_penalty)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 30 == 0:
            print(f"step {step:3d}  ctc {loss.item():.4f}  train cer {cer(hyp, in_lens, labels, label_lens):.4f}")

    model.eval()
    with torch.no_grad():
        wav, mask, labels, label_lens = synth_batch(32, torch.Generator().manual_seed(123))
        loss, hyp, in_lens = ctc_step(model, wav, mask, labels, label_lens, args.blank_penalty)
    print(f"eval ctc {loss.item():.4f}  eval cer {cer(hyp, in_lens, labels, label_lens):.4f}")
    print(f"param checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
