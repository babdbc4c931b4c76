import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.rnn = nn.GRU(1, hidden, batch_first=True)
        self.level_gate = nn.Linear(1, 1)

    def forward(self, src, h0=None):
        out, h = self.rnn(src, h0)
        # channel 0 of the memory tracks the level: let the raw input gate it
        gate = torch.sigmoid(self.level_gate(src))
        out = torch.cat([out[:, :, :1] * gate, out[:, :, 1:]], dim=2)
        return out, h


class AttnDecoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.cell = nn.GRUCell(1 + hidden, hidden)
        self.out = nn.Linear(2 * hidden, 1)

    def forward(self, enc_out, h, tgt, first_input):
        inp = first_input
        preds = []
        for t in range(tgt.size(1)):
            scores = torch.bmm(enc_out, h.unsqueeze(2)).squeeze(2)
            attn = scores.softmax(dim=-1)
            ctx = torch.bmm(attn.unsqueeze(1), enc_out).squeeze(1)
            h = self.cell(torch.cat([inp, ctx], dim=-1), h)
            preds.append(self.out(torch.cat([h, ctx], dim=-1)))
            inp = tgt[:, t]  # teacher forcing
        return torch.stack(preds, dim=1), h


class Seq2Seq(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.encoder = Encoder(hidden)
        self.decoder = AttnDecoder(hidden)

    def forward(self, src, tgt, state=None):
        enc_out, h = self.encoder(src, state)
        preds, h_dec = self.decoder(enc_out, h[0], tgt, src[:, -1])
        return preds, h_dec.unsqueeze(0)
