import torch
import torch.nn as nn

torch.manual_seed(6)

# character-level LM with truncated BPTT: hidden state carried across chunks
text = "the quick brown fox jumps over the lazy dog " * 20
vocab = sorted(set(text))
stoi = {c: i for i, c in enumerate(vocab)}
data = torch.tensor([stoi[c] for c in text])


class CharRNN(nn.Module):
    def __init__(self, v, emb=16, hid=48):
        super().__init__()
        self.emb = nn.Embedding(v, emb)
        self.rnn = nn.GRU(emb, hid, batch_first=True)
        self.out = nn.Linear(hid, v)

    def forward(self, x, h):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y), h


model = CharRNN(len(vocab))
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
loss_fn = nn.CrossEntropyLoss()
seq_len = 25
hidden = None
pos = 0
step = 0
while pos + seq_len + 1 < len(data):
    x = data[pos:pos + seq_len].unsqueeze(0)
    y = data[pos + 1:pos + seq_len + 1].unsqueeze(0)
    logits, hidden = model(x, hidden)
    loss = loss_fn(logits.view(-1, len(vocab)), y.view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    hidden = hidden.detach()
    if step % 5 == 0:
        print(f"step {step} pos {pos} loss {loss.item():.6f}")
    pos += seq_len
    step += 1
print("final loss", round(loss.item(), 6))
