# MAML on sine-wave regression (Finn et al. 2017), functional MLP.
# Second-order meta-gradient: the inner-loop gradients are taken with
# create_graph=True. Run: python input.py
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)

HIDDEN = 40
INNER_STEPS = 2
INNER_LR = 0.02
META_LR = 1e-3
META_BATCH = 4
K_SHOT = 10
ITERATIONS = 60


def init_params():
    def layer(n_in, n_out):
        w = torch.empty(n_out, n_in)
        torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5))
        b = torch.zeros(n_out)
        return [w.requires_grad_(), b.requires_grad_()]
    return layer(1, HIDDEN) + layer(HIDDEN, HIDDEN) + layer(HIDDEN, 1)


def forward(x, params):
    w1, b1, w2, b2, w3, b3 = params
    h = F.relu(F.linear(x, w1, b1))
    h = F.relu(F.linear(h, w2, b2))
    return F.linear(h, w3, b3)


def sample_task():
    amp = torch.rand(1).item() * 4.9 + 0.1
    phase = torch.rand(1).item() * math.pi

    def draw(n):
        x = torch.rand(n, 1) * 10.0 - 5.0
        return x, amp * torch.sin(x + phase)
    return draw


def adapt(params, xs, ys):
    fast = [p.clone() for p in params]  # work on a copy, keep the meta-weights intact
    for _ in range(INNER_STEPS):
        inner_loss = F.mse_loss(forward(xs, fast), ys)
        grads = torch.autograd.grad(inner_loss, fast, create_graph=True)
        for w, g in zip(fast, grads):
            w.sub_(INNER_LR * g)
    return fast


params = init_params()
meta_opt = torch.optim.Adam(params, lr=META_LR)

for it in range(ITERATIONS):
    meta_opt.zero_grad()
    meta_loss = 0.0
    for _ in range(META_BATCH):
        draw = sample_task()
        xs, ys = draw(K_SHOT)
        xq, yq = draw(K_SHOT)
        fast = adapt(params, xs, ys)
        meta_loss = meta_loss + F.mse_loss(forward(xq, fast), yq)
    meta_loss = meta_loss / META_BATCH
    meta_loss.backward()
    meta_opt.step()
    if it % 10 == 0 or it == ITERATIONS - 1:
        print(f"iter {it:3d} meta-loss {meta_loss.item():.6f}")

checksum = sum(p.double().sum() for p in params).item()
print(f"checksum {checksum:.6f}")
