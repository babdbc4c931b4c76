# Character-level LSTM language model with tied input/output embeddings and dropout on the
# embeddings and on the LSTM outputs (applied in place to save memory).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB = 28
EMB = 48
SEQ_LEN = 32
BATCH = 16
STEPS = 30
DROPOUT = 0.3
LR = 5e-3
CLIP = 1.0


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, EMB)
        self.lstm = nn.LSTM(EMB, EMB, num_layers=1, batch_first=True)
        self.proj = nn.Linear(EMB, VOCAB)
        self.proj.weight = self.embedding.weight  # weight tying (Press & Wolf)
        self.dropout = DROPOUT

    def forward(self, x, state=None):
        emb = self.embedding(x)
        emb = F.dropout(emb, self.dropout, self.training, inplace=True)
        out, state = self.lstm(emb, state)
        out = F.dropout(out, self.dropout, self.training)
        return self.proj(out), state


# synthetic corpus from a random sparse Markov chain over characters
trans = torch.rand(VOCAB, VOCAB) ** 6
trans = trans / trans.sum(dim=1, keepdim=True)
corpus = [0]
for _ in range(STEPS * BATCH * (SEQ_LEN + 1)):
    corpus.append(int(torch.multinomial(trans[corpus[-1]], 1)))
corpus = torch.tensor(corpus)

model = CharLM()
opt = torch.optim.Adam(model.parameters(), lr=LR)

chunk = SEQ_LEN + 1
for step in range(STEPS):
    base = step * BATCH * chunk
    batch = corpus[base:base + BATCH * chunk].view(BATCH, chunk)
    inp, tgt = batch[:, :-1], batch[:, 1:]
    model.train()
    logits, _ = model(inp)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")

print(f"{sum(p.double().sum().item() for p in model.parameters()):.6f}")
