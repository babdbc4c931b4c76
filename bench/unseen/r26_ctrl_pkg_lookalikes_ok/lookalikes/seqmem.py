"""Segment-recurrent model: detached memory, cumulative attention fed through torch.cat,
evaluation under a no_grad context, masked gate energies."""
import torch
import torch.nn.functional as F
from torch import nn


class MemLM(nn.Module):
    def __init__(self, vocab, dim=24, mem_len=16):
        super().__init__()
        self.mem_len = mem_len
        self.emb = nn.Embedding(vocab, dim)
        self.loc = nn.Conv1d(2, 4, 3, padding=1)
        self.loc_proj = nn.Linear(4, 1)
        self.q, self.k = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.out = nn.Linear(2 * dim, vocab)

    @torch.no_grad()
    def update_mem(self, mem, h):
        cat = h if mem is None else torch.cat([mem, h], 1)
        return cat[:, -self.mem_len:]

    def forward(self, x, mem):
        h = self.emb(x)
        ctx_src = h if mem is None else torch.cat([mem, h], 1)
        B, S = ctx_src.shape[:2]
        prev, cum = h.new_zeros(B, S), h.new_zeros(B, S)
        keys = self.k(ctx_src)
        outs = []
        for t in range(x.size(1)):
            loc = self.loc_proj(self.loc(torch.cat([prev.unsqueeze(1), cum.unsqueeze(1)], 1)).transpose(1, 2))
            energies = (keys @ self.q(h[:, t]).unsqueeze(-1)).squeeze(-1) + loc.squeeze(-1)
            energies.masked_fill_(torch.arange(S) > S - x.size(1) + t, float("-inf"))
            prev = energies.softmax(-1)
            cum += prev                       # the conv reads a torch.cat copy
            outs.append(torch.cat([h[:, t], (prev.unsqueeze(1) @ ctx_src).squeeze(1)], -1))
        logits = self.out(torch.stack(outs, 1))
        return logits, self.update_mem(mem, h)


def evaluate(model, data, tgt_len):
    model.eval()
    total, count, mem = 0.0, 0, None
    with torch.no_grad():
        for i in range(0, data.size(1) - 1, tgt_len):
            x, y = data[:, i:i + tgt_len], data[:, i + 1:i + 1 + tgt_len]
            logits, mem = model(x[:, : y.size(1)], mem)
            total += F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum").item()
            count += y.numel()
    model.train()
    return total / count


def run(cfg, gen):
    vocab = 10
    table = torch.softmax(torch.randn(vocab, vocab, generator=gen) * 3, -1)
    seq = [0]
    for _ in range(cfg["tokens"] - 1):
        seq.append(int(torch.multinomial(table[seq[-1]], 1, generator=gen)))
    data = torch.tensor(seq).view(cfg["batch"], -1)
    train, val = data[:, : data.size(1) * 3 // 4], data[:, data.size(1) * 3 // 4:]
    model = MemLM(vocab, mem_len=cfg["mem_len"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    T = cfg["tgt_len"]
    for epoch in range(cfg["epochs"]):
        mem, tot, n = None, 0.0, 0
        for i in range(0, train.size(1) - 1, T):
            x, y = train[:, i:i + T], train[:, i + 1:i + 1 + T]
            logits, mem = model(x[:, : y.size(1)], mem)
            loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item()
            n += 1
        print(f"seqmem epoch {epoch} train_loss {tot / n:.6f} val_loss {evaluate(model, val, T):.6f}")
    return model
