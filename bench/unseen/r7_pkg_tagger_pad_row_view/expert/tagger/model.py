import torch.nn as nn

from .vocab import N_TAGS, N_WORDS


class BiLSTMTagger(nn.Module):
    def __init__(self, emb_dim, hidden):
        super().__init__()
        self.embed = nn.Embedding(N_WORDS, emb_dim)
        self.lstm = nn.LSTM(emb_dim, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, N_TAGS)

    def forward(self, words):
        h, _ = self.lstm(self.embed(words))
        return self.out(h)
