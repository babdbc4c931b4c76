# Two-task network (depth regression + segmentation-like classification) on a
# shared trunk, task losses weighted with Dynamic Weight Average (DWA, Liu et al.
# CVPR 2019, "End-to-End Multi-Task Learning with Attention"): the weight of
# task k at epoch t depends on L_k(t-1) / L_k(t-2). Run: python input.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

D_IN, HIDDEN, N_CLASSES = 12, 48, 4
N, BATCH, EPOCHS = 192, 32, 5
T_DWA = 2.0
MAX_DEPTH = 3.0
K = 2

X = torch.randn(N, D_IN)
depth_true = torch.exp(X[:, :3].sum(1) * 0.6).clamp(max=MAX_DEPTH)
cls_true = (X[:, 3:7] + 0.3 * torch.randn(N, 4)).argmax(1)


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(D_IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU())
        self.depth_head = nn.Linear(HIDDEN, 1)
        self.cls_head = nn.Linear(HIDDEN, N_CLASSES)

    def forward(self, x):
        h = self.trunk(x)
        depth = torch.exp(self.depth_head(h)).squeeze(-1)
        depth = depth.clamp(max=MAX_DEPTH)  # depth sensor range
        return depth, self.cls_head(h)


model = MultiTaskNet()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
n_batches = N // BATCH
history = []  # per-epoch average loss of each task

for epoch in range(EPOCHS):
    if epoch < 2:
        lambda_weight = torch.ones(K)
    else:
        w = torch.stack([history[-1][k] / history[-2][k] for k in range(K)])
        lambda_weight = K * torch.softmax(w / T_DWA, dim=0)
    avg = [0.0] * K
    perm = torch.randperm(N)
    for b in range(n_batches):
        idx = perm[b * BATCH:(b + 1) * BATCH]
        depth, logits = model(X[idx])
        task_loss = [F.l1_loss(depth, depth_true[idx]), F.cross_entropy(logits, cls_true[idx])]
        loss = sum(lambda_weight[k] * task_loss[k] for k in range(K))
        opt.zero_grad()
        loss.backward()
        opt.step()
        for k in range(K):
            avg[k] += task_loss[k].detach() / n_batches
    history.append(avg)
    print(f"epoch {epoch} weights {lambda_weight[0].item():.6f} {lambda_weight[1].item():.6f} "
          f"depth L1 {float(avg[0]):.6f} CE {float(avg[1]):.6f}")

print(f"checksum {sum(p.double().sum() for p in model.parameters()).item():.6f}")
