"""Train a small Infini-attention LM on segmented synthetic sequences.

    python input.py --epochs 3
"""
import argparse

import torch

from infini import InfiniLM, SegmentTrainer, make_sequences


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--segments", type=int, default=4)
    p.add_argument("--seg-len", type=int, default=8)
    p.add_argument("--vocab", type=int, default=24)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(args.seed)
    train = make_sequences(256, args.segments, args.seg_len, args.vocab, gen)
    val = make_sequences(64, args.segments, args.seg_len, args.vocab, gen)
    model = InfiniLM(args.vocab, seg_len=args.seg_len)
    trainer = SegmentTrainer(model, args.lr)
    trainer.fit(train, val, args.epochs, args.batch_size, gen)
    print("memory gate " + " ".join(f"{g:.4f}" for g in torch.sigmoid(model.attn.beta).flatten().tolist()))
    print(f"head norm {model.head.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
