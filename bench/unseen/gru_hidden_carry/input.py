import torch
import torch.nn as nn

torch.manual_seed(7)

text = "hello world, this is a tiny corpus for a tiny char rnn. " * 20
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text])


class CharRNN(nn.Module):
    def __init__(self, vocab, hidden=48):
        super().__init__()
        self.emb = nn.Embedding(vocab, 16)
        self.gru = nn.GRU(16, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, vocab)

    def forward(self, x, h):
        out, h = self.gru(self.emb(x), h)
        return self.fc(out), h


model = CharRNN(len(chars))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
crit = nn.CrossEntropyLoss()
seq_len, batch = 25, 4
stream = data[: (len(data) // batch) * batch].view(batch, -1)

for epoch in range(2):
    h = torch.zeros(1, batch, 48)
    for i in range(0, stream.shape[1] - seq_len - 1, seq_len):
        x = stream[:, i:i + seq_len]
        y = stream[:, i + 1:i + seq_len + 1]
        logits, h = model(x, h)
        loss = crit(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i % (seq_len * 10) == 0:
            print(f"epoch {epoch} pos {i} loss {loss.item():.6f}")
