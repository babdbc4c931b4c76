# Exact GP regression (RBF kernel) fitted by maximising the log marginal likelihood.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

N_TRAIN = 60
ITERS = 30
LR = 0.05


class RBFKernel(nn.Module):
    def __init__(self, lengthscale=1.0, variance=1.0):
        super().__init__()
        self.log_lengthscale = nn.Parameter(torch.tensor(math.log(lengthscale)))
        self.log_variance = nn.Parameter(torch.tensor(math.log(variance)))
        # positive hyper-parameters
        self.lengthscale = torch.exp(self.log_lengthscale)
        self.variance = torch.exp(self.log_variance)

    def forward(self, x1, x2):
        d2 = (x1[:, None, :] - x2[None, :, :]).pow(2).sum(-1)
        return self.variance * torch.exp(-0.5 * d2 / self.lengthscale ** 2)


class GPR(nn.Module):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.kernel = RBFKernel(lengthscale=0.5, variance=1.0)
        self.log_noise = nn.Parameter(torch.tensor(math.log(0.1)))

    def neg_log_marginal_likelihood(self):
        n = self.x.shape[0]
        K = self.kernel(self.x, self.x) + torch.exp(self.log_noise) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(self.y[:, None], L)
        return (0.5 * (self.y[:, None] * alpha).sum()
                + torch.log(torch.diagonal(L)).sum()
                + 0.5 * n * math.log(2 * math.pi))

    @torch.no_grad()
    def predict(self, xs):
        n = self.x.shape[0]
        K = self.kernel(self.x, self.x) + torch.exp(self.log_noise) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(self.y[:, None], L)
        return (self.kernel(xs, self.x) @ alpha).squeeze(-1)


x = torch.rand(N_TRAIN, 1) * 6 - 3
y = torch.sin(2 * x[:, 0]) + 0.3 * x[:, 0] + 0.1 * torch.randn(N_TRAIN)
gp = GPR(x, y)
opt = torch.optim.Adam(gp.parameters(), lr=LR)

for it in range(ITERS):
    opt.zero_grad()
    nll = gp.neg_log_marginal_likelihood()
    nll.backward()
    opt.step()
    print(f"iter {it} nll {nll.item():.6f}")

xs = torch.linspace(-3, 3, 7)[:, None]
print("pred", " ".join(f"{v:.6f}" for v in gp.predict(xs).tolist()))
print(f"{sum(p.double().sum().item() for p in gp.parameters()):.6f}")
