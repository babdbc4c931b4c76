"""Learning to learn by gradient descent by gradient descent (Andrychowicz et al., 2016).

A coordinate-wise two-layer LSTM learns to optimise random 10-d quadratic
functions f(theta) = ||W theta - y||^2.  The optimizee is unrolled for
``--steps`` steps; every ``--unroll`` steps the summed optimizee losses are
back-propagated into the LSTM (truncated BPTT) and the meta-optimizer (Adam)
takes a step.

Usage:  python input.py [--epochs 6] [--steps 20] [--unroll 5]
"""
import argparse

import torch
import torch.nn as nn

torch.manual_seed(0)


def build_args(argv=None):
    p = argparse.ArgumentParser(description="L2L meta-training on quadratics")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--problems", type=int, default=4, help="problems per epoch")
    p.add_argument("--steps", type=int, default=20, help="optimizee steps per problem")
    p.add_argument("--unroll", type=int, default=5, help="truncation length")
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--hidden", type=int, default=20)
    p.add_argument("--meta-lr", type=float, default=1e-2)
    p.add_argument("--out-mul", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


class QuadraticProblem:
    """A random quadratic ``f(theta) = mean_i (W theta - y)_i^2`` (batch of one)."""

    def __init__(self, dim, generator):
        self.W = torch.randn(dim, dim, generator=generator)
        self.y = torch.randn(dim, generator=generator)

    def init_params(self):
        return torch.zeros(self.W.shape[1], requires_grad=True)

    def loss(self, theta):
        return ((self.W @ theta - self.y) ** 2).mean()


class LSTMOptimizer(nn.Module):
    """Coordinate-wise LSTM optimizer: every coordinate is an element of the batch."""

    def __init__(self, hidden=20, out_mul=0.1):
        super().__init__()
        self.hidden = hidden
        self.out_mul = out_mul
        self.cell1 = nn.LSTMCell(1, hidden)
        self.cell2 = nn.LSTMCell(hidden, hidden)
        self.head = nn.Linear(hidden, 1)
        with torch.no_grad():
            self.head.weight.mul_(0.1)
            self.head.bias.zero_()

    def init_state(self, n):
        z = lambda: torch.zeros(n, self.hidden)
        return [(z(), z()), (z(), z())]

    def forward(self, grad, state):
        x = grad.reshape(-1, 1)
        h1, c1 = self.cell1(x, state[0])
        h2, c2 = self.cell2(h1, state[1])
        update = self.head(h2).reshape(grad.shape) * self.out_mul
        return update, [(h1, c1), (h2, c2)]


def optimizee_step(problem, theta, opt_net, state):
    """One inner step: loss at theta, its gradient, and the LSTM's proposed update."""
    loss = problem.loss(theta)
    (grad,) = torch.autograd.grad(loss, theta, retain_graph=True)
    update, state = opt_net(grad, state)
    return loss, theta + update, state


def meta_train_problem(problem, opt_net, meta_opt, args):
    """Unroll the optimizee and train the LSTM with truncated BPTT."""
    theta = problem.init_params()
    state = opt_net.init_state(theta.numel())
    meta_losses = []
    for start in range(0, args.steps, args.unroll):
        meta_loss = 0.0
        for _ in range(args.unroll):
            loss, theta, state = optimizee_step(problem, theta, opt_net, state)
            meta_loss = meta_loss + loss
        meta_opt.zero_grad()
        meta_loss.backward()
        meta_opt.step()
        theta = theta.detach().requires_grad_(True)
        state = [(h.detach(), c.detach()) for h, c in state]
        meta_losses.append(meta_loss.item() / args.unroll)
    final = problem.loss(theta).item()
    return sum(meta_losses) / len(meta_losses), final


def main(argv=None):
    args = build_args(argv)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)
    opt_net = LSTMOptimizer(args.hidden, args.out_mul)
    meta_opt = torch.optim.Adam(opt_net.parameters(), lr=args.meta_lr)
    for epoch in range(args.epochs):
        metas, finals = [], []
        for _ in range(args.problems):
            problem = QuadraticProblem(args.dim, gen)
            m, f = meta_train_problem(problem, opt_net, meta_opt, args)
            metas.append(m)
            finals.append(f)
        print(f"epoch {epoch} meta_loss {sum(metas)/len(metas):.6f} final_f {sum(finals)/len(finals):.6f}")
    checksum = sum(p.double().sum().item() for p in opt_net.parameters())
    print(f"checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
