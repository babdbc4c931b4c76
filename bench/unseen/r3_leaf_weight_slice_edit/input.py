# "Knowledge neuron" editing on a toy bag-of-tokens model: train, find the FFN neurons
# most active for one fact, then move that fact's prediction by editing the columns of the
# FFN output weight for those neurons. Based on
# https://github.com/Hunter-DDM/knowledge-neurons/issues/14 ("a view of a leaf Variable that
# requires grad is being used in an in-place operation" from
# `...dense.weight[:, pos] -= ori_pred_emb * lambda`).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(9)

V, D, H = 20, 16, 48


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.EmbeddingBag(V, D, mode="mean")
        self.fc1 = nn.Linear(D, H)
        self.fc2 = nn.Linear(H, D)
        self.out = nn.Linear(D, V)

    def forward(self, tokens):
        h = self.emb(tokens)
        h = h + self.fc2(F.gelu(self.fc1(h)))
        return self.out(h)


model = TinyLM()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
prompts = torch.randint(0, V, (200, 5))
answers = (prompts.sum(1) * 7) % V

for step in range(60):
    idx = torch.randint(0, 200, (32,))
    loss = F.cross_entropy(model(prompts[idx]), answers[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"train step {step} loss {loss.item():.6f}")

fact = prompts[:1]
with torch.no_grad():
    acts = F.gelu(model.fc1(model.emb(fact)))[0]
pos = acts.topk(4).indices
ori = model(fact).argmax(-1).item()
tgt = (ori + 1) % V
lambda_1, lambda_2 = 2.0, 2.0
print(f"before edit p(ori) {F.softmax(model(fact), -1)[0, ori].item():.6f} "
      f"p(tgt) {F.softmax(model(fact), -1)[0, tgt].item():.6f}")

ori_pred_emb = model.out.weight[ori]
tgt_emb = model.out.weight[tgt]
model.fc2.weight[:, pos] -= ori_pred_emb.unsqueeze(1) * lambda_1
model.fc2.weight[:, pos] += tgt_emb.unsqueeze(1) * lambda_2

probs = F.softmax(model(fact), -1)
print(f"after edit p(ori) {probs[0, ori].item():.6f} p(tgt) {probs[0, tgt].item():.6f}")
with torch.no_grad():
    other = F.cross_entropy(model(prompts[1:]), answers[1:])
print(f"loss on the other facts {other.item():.6f}")
