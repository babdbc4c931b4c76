import torch
import torch.nn as nn


class LSTMLM(nn.Module):
    def __init__(self, vocab, emb, hidden, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        self.layers, self.hidden = layers, hidden

    def init_state(self, batch):
        # one tensor (2, layers, batch, hidden) holds (h, c): easy to store, move and reset
        return torch.zeros(2, self.layers, batch, self.hidden)

    def forward(self, tokens, state):
        h0, c0 = state
        out, (h, c) = self.lstm(self.embed(tokens), (h0, c0))
        return self.out(out), torch.stack([h, c])
