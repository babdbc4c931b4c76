import torch.nn as nn

from .layers import AttentionPooling


class TextClassifier(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden, n_classes, pad_idx=0):
        super().__init__()
        self.pad_idx = pad_idx
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_idx)
        self.rnn = nn.GRU(emb_dim, hidden, batch_first=True, bidirectional=True)
        self.pool = AttentionPooling(2 * hidden)
        self.out = nn.Linear(2 * hidden, n_classes)

    def forward(self, tokens):
        pad_mask = tokens.eq(self.pad_idx)
        h, _ = self.rnn(self.embed(tokens))
        pooled, _ = self.pool(h, pad_mask)
        return self.out(pooled)
