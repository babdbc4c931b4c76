import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)

# mean-teacher style semi-supervised training
student = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 3))
teacher = copy.deepcopy(student)
opt = torch.optim.SGD(student.parameters(), lr=0.1)

X_lab = torch.randn(64, 5)
y_lab = torch.randint(0, 3, (64,))
X_unl = torch.randn(256, 5)
ema_decay = 0.95


@torch.no_grad()
def update_teacher(student, teacher, decay):
    for t_param, s_param in zip(teacher.parameters(), student.parameters()):
        t_param.mul_(decay).add_(s_param, alpha=1 - decay)


for step in range(30):
    noise = 0.1 * torch.randn_like(X_unl)
    sup = F.cross_entropy(student(X_lab), y_lab)
    with torch.no_grad():
        t_prob = F.softmax(teacher(X_unl + noise), dim=1)
    s_logp = F.log_softmax(student(X_unl), dim=1)
    cons = F.kl_div(s_logp, t_prob, reduction="batchmean")
    loss = sup + 0.5 * cons
    opt.zero_grad()
    loss.backward()
    opt.step()
    update_teacher(student, teacher, ema_decay)
    if step % 5 == 0:
        print(f"step {step} sup {sup.item():.6f} cons {cons.item():.6f}")

with torch.no_grad():
    acc = (teacher(X_lab).argmax(1) == y_lab).float().mean().item()
print(f"teacher acc {acc:.4f}")
