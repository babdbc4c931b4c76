"""Train a sparse autoencoder (dictionary learning) on the residual stream of a tiny GPT-2.

The GPT-2 is built from a random config (no download); its activations at one layer are harvested
into a buffer, then an SAE with unit-norm decoder rows is trained on the buffer.

    python input.py --layer 1 --latents 128 --epochs 4
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import GPT2Config, GPT2Model


class SparseAutoencoder(nn.Module):
    def __init__(self, d_model, n_latents):
        super().__init__()
        self.W_enc = nn.Parameter(torch.randn(d_model, n_latents) / d_model ** 0.5)
        self.b_enc = nn.Parameter(torch.zeros(n_latents))
        self.W_dec = nn.Parameter(self.W_enc.detach().t().clone())
        self.b_dec = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        # decoder directions are kept at unit norm (Bricken et al., 2023), so the L1 penalty cannot
        # be dodged by shrinking f and growing W_dec
        self.W_dec /= self.W_dec.norm(dim=1, keepdim=True)
        f = F.relu((x - self.b_dec) @ self.W_enc + self.b_enc)
        x_hat = f @ self.W_dec + self.b_dec
        return x_hat, f


def synthetic_tokens(n_seq, seq_len, vocab, gen):
    """Sequences stitched from a small set of random 4-grams, so the residual stream has structure."""
    grams = torch.randint(0, vocab, (24, 4), generator=gen)
    picks = torch.randint(0, grams.size(0), (n_seq, seq_len // 4), generator=gen)
    return grams[picks].reshape(n_seq, seq_len)


def harvest(lm, tokens, layer):
    out = lm(input_ids=tokens, output_hidden_states=True)
    return out.hidden_states[layer].reshape(-1, lm.config.n_embd)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layer", type=int, default=1)
    p.add_argument("--latents", type=int, default=128)
    p.add_argument("--l1", type=float, default=1e-2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--seed", type=int, default=10)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(args.seed)
    config = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    lm = GPT2Model(config)
    tokens = synthetic_tokens(64, 32, config.vocab_size, gen)
    acts = harvest(lm, tokens, args.layer)
    acts = (acts - acts.mean(0)) / acts.norm(dim=1).mean()       # centre, unit average norm
    print(f"harvested {acts.shape[0]} activations of dim {acts.shape[1]} from layer {args.layer}")

    sae = SparseAutoencoder(config.n_embd, args.latents)
    opt = torch.optim.Adam(sae.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        perm = torch.randperm(acts.size(0), generator=gen)
        mse_sum, l0_sum, n = 0.0, 0.0, 0
        fired = torch.zeros(args.latents, dtype=torch.bool)
        for idx in perm.split(args.batch_size):
            x = acts[idx]
            x_hat, f = sae(x)
            mse = (x_hat - x).pow(2).sum(-1).mean()
            loss = mse + args.l1 * f.abs().sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            mse_sum += mse.item()
            l0_sum += (f > 0).float().sum(-1).mean().item()
            fired |= (f > 0).any(0)
            n += 1
        print(f"epoch {epoch} mse {mse_sum / n:.5f} L0 {l0_sum / n:.2f} "
              f"dead {1 - fired.float().mean().item():.3f} dec_norm {sae.W_dec.norm(dim=1).mean().item():.4f}")


if __name__ == "__main__":
    main()
