"""Neural Turing Machine (content addressing only) on the copy task.

An LSTM controller emits a read key and a write key / erase / add vector per
step; the external memory is read by soft attention and updated with the NTM
erase-then-add rule (Graves et al. 2014).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class NTM(nn.Module):
    def __init__(self, n_bits, hidden, n_slots, slot_dim):
        super().__init__()
        self.n_slots, self.slot_dim = n_slots, slot_dim
        self.controller = nn.LSTMCell(n_bits + 2 + slot_dim, hidden)
        # read key, read strength, write key, write strength, erase, add
        self.heads = nn.Linear(hidden, 2 * slot_dim + 2 + 2 * slot_dim)
        self.out = nn.Linear(hidden + slot_dim, n_bits)

    @staticmethod
    def address(memory, key, strength):
        sim = F.cosine_similarity(memory, key.unsqueeze(1), dim=-1, eps=1e-6)   # [B, N]
        return F.softmax(strength * sim, dim=-1)

    def forward(self, x):
        """x: [B, T, n_bits + 2] -> logits [B, T, n_bits]."""
        B, T, _ = x.shape
        D = self.slot_dim
        h = x.new_zeros(B, self.controller.hidden_size)
        c = x.new_zeros(B, self.controller.hidden_size)
        memory = x.new_full((B, self.n_slots, D), 1e-3)
        read = x.new_zeros(B, D)
        outs = []
        for t in range(T):
            h, c = self.controller(torch.cat([x[:, t], read], dim=-1), (h, c))
            p = self.heads(h)
            r_key, w_key = torch.tanh(p[:, :D]), torch.tanh(p[:, D:2 * D])
            r_beta, w_beta = F.softplus(p[:, 2 * D:2 * D + 2]).unbind(-1)
            erase = torch.sigmoid(p[:, 2 * D + 2:3 * D + 2])
            add = torch.tanh(p[:, 3 * D + 2:])

            w_r = self.address(memory, r_key, r_beta.unsqueeze(-1))
            read = torch.bmm(w_r.unsqueeze(1), memory).squeeze(1)
            outs.append(self.out(torch.cat([h, read], dim=-1)))

            w_w = self.address(memory, w_key, w_beta.unsqueeze(-1))
            # erase then add
            memory.mul_(1 - w_w.unsqueeze(-1) * erase.unsqueeze(1))
            memory.add_(w_w.unsqueeze(-1) * add.unsqueeze(1))
        return torch.stack(outs, dim=1)


def copy_batch(g, batch, length, n_bits):
    """Input: sequence, delimiter, then blanks; target: the sequence during the blanks."""
    seq = torch.bernoulli(torch.full((batch, length, n_bits), 0.5), generator=g)
    T = 2 * length + 1
    x = torch.zeros(batch, T, n_bits + 2)
    x[:, :length, :n_bits] = seq
    x[:, length, n_bits] = 1.0              # delimiter
    x[:, length + 1:, n_bits + 1] = 1.0     # "recall" flag
    return x, seq


def loss_and_errors(model, x, seq):
    L = seq.shape[1]
    logits = model(x)[:, L + 1:]
    loss = F.binary_cross_entropy_with_logits(logits, seq)
    bit_err = ((logits > 0).float() != seq).float().sum(dim=(1, 2)).mean()
    return loss, bit_err


def evaluate(model, batches):
    model.eval()
    torch.set_grad_enabled(False)
    tot_loss, tot_err = 0.0, 0.0
    for x, seq in batches:
        loss, err = loss_and_errors(model, x, seq)
        tot_loss += loss.item()
        tot_err += err.item()
    model.train()
    return tot_loss / len(batches), tot_err / len(batches)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-bits", type=int, default=6)
    ap.add_argument("--length", type=int, default=5)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--slots", type=int, default=16)
    ap.add_argument("--slot-dim", type=int, default=12)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps-per-epoch", type=int, default=30)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--clip", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed + 1)
    val = [copy_batch(g, 64, args.length, args.n_bits) for _ in range(2)]
    model = NTM(args.n_bits, args.hidden, args.slots, args.slot_dim)
    opt = torch.optim.RMSprop(model.parameters(), lr=args.lr, momentum=0.9)

    val_loss, val_err = evaluate(model, val)
    print(f"init val_loss {val_loss:.6f} val_bit_err {val_err:.6f}")
    for epoch in range(args.epochs):
        tot = 0.0
        for _ in range(args.steps_per_epoch):
            x, seq = copy_batch(g, args.batch, args.length, args.n_bits)
            loss, _ = loss_and_errors(model, x, seq)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
            tot += loss.item()
        val_loss, val_err = evaluate(model, val)
        print(f"epoch {epoch} loss {tot / args.steps_per_epoch:.6f} "
              f"val_loss {val_loss:.6f} val_bit_err {val_err:.6f}")
    checksum = sum(p.detach().double().abs().sum().item() for p in model.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
