# MoCo (momentum contrast) on synthetic feature vectors: query encoder, momentum key
# encoder and a queue of negative keys, written after facebookresearch/moco's builder.py.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN_DIM = 32
FEAT_DIM = 16
QUEUE_K = 128
MOMENTUM = 0.99
TEMPERATURE = 0.2
N_BASE = 512
BATCH = 32
ITERS = 30
LR = 0.05


def make_encoder():
    return nn.Sequential(nn.Linear(IN_DIM, 64), nn.BatchNorm1d(64), nn.ReLU(inplace=True), nn.Linear(64, FEAT_DIM))


class MoCo(nn.Module):
    def __init__(self, dim=FEAT_DIM, K=QUEUE_K, m=MOMENTUM, T=TEMPERATURE):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = make_encoder()
        self.encoder_k = make_encoder()
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        batch_size = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % batch_size == 0
        self.queue[:, ptr:ptr + batch_size] = keys.T
        self.queue_ptr[0] = (ptr + batch_size) % self.K

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self._dequeue_and_enqueue(k)
        return logits, labels


def augment(x):
    scale = 1.0 + 0.2 * torch.randn(x.shape[0], 1)
    return x * scale + 0.3 * torch.randn_like(x)


base = torch.randn(N_BASE, IN_DIM)
model = MoCo()
opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, weight_decay=1e-4)

for it in range(ITERS):
    idx = torch.randint(0, N_BASE, (BATCH,))
    x = base[idx]
    logits, labels = model(augment(x), augment(x))
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (logits.argmax(1) == 0).float().mean().item()
    print(f"iter {it} loss {loss.item():.6f} top1 {acc:.6f}")

print(f"{sum(p.double().sum().item() for p in model.encoder_q.parameters()):.6f}")
print(f"{model.queue.double().sum().item():.6f}")
