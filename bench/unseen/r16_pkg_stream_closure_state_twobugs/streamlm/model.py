import torch.nn as nn


class CharGRU(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(cfg.vocab, cfg.emb)
        self.rnn = nn.GRU(cfg.emb, cfg.hidden, batch_first=True)
        self.head = nn.Linear(cfg.hidden, cfg.vocab)

    def forward(self, x, h=None):
        out, h = self.rnn(self.emb(x), h)
        return self.head(out), h
