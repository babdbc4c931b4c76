import torch
import torch.nn as nn
import torch.nn.functional as F


class PointerGenerator(nn.Module):
    def __init__(self, vocab_size, emb, hidden):
        super().__init__()
        self.vocab_size = vocab_size
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.encoder = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.reduce = nn.Linear(2 * hidden, hidden)
        # attention with coverage: e = v^T tanh(W_h h_i + W_s s_t + w_c c_i)
        self.W_h = nn.Linear(2 * hidden, hidden, bias=False)
        self.W_s = nn.Linear(hidden, hidden)
        self.w_c = nn.Linear(1, hidden, bias=False)
        self.v = nn.Linear(hidden, 1, bias=False)
        self.decoder = nn.GRUCell(emb + 2 * hidden, hidden)
        self.out1 = nn.Linear(3 * hidden, hidden)
        self.out2 = nn.Linear(hidden, vocab_size)
        self.gen = nn.Linear(3 * hidden + emb, 1)

    def forward(self, src, src_ext, n_oov, tgt_in):
        B, S = src.shape
        pad = src.eq(0)
        enc_out, h = self.encoder(self.embed(src))                  # (B,S,2H), (2,B,H)
        s = torch.tanh(self.reduce(torch.cat([h[0], h[1]], -1)))
        enc_feat = self.W_h(enc_out)
        context = enc_out.new_zeros(B, enc_out.shape[-1])
        coverage = enc_out.new_zeros(B, S)

        final_dists, attns, coverages = [], [], []
        for t in range(tgt_in.shape[1]):
            y_emb = self.embed(tgt_in[:, t])
            s = self.decoder(torch.cat([y_emb, context], -1), s)
            feats = enc_feat + self.W_s(s)[:, None] + self.w_c(coverage[..., None])
            scores = self.v(torch.tanh(feats)).squeeze(-1).masked_fill(pad, float("-inf"))
            attn = F.softmax(scores, dim=-1)
            context = torch.bmm(attn[:, None], enc_out).squeeze(1)

            vocab_dist = F.softmax(self.out2(self.out1(torch.cat([s, context], -1))), dim=-1)
            p_gen = torch.sigmoid(self.gen(torch.cat([context, s, y_emb], -1)))
            vocab_dist.mul_(p_gen)
            attn_dist = (1 - p_gen) * attn
            extended = torch.cat([vocab_dist, vocab_dist.new_zeros(B, n_oov)], dim=1)
            final = extended.scatter_add(1, src_ext, attn_dist)

            final_dists.append(final)
            attns.append(attn)
            coverages.append(coverage)
            coverage += attn
        return torch.stack(final_dists, 1), torch.stack(attns, 1), torch.stack(coverages, 1)
